// Turns `--model` into a loaded model: a GGUF path, an `hf:` URI (downloaded once into the
// data directory, with a progress bar), or `tiny` (generated here, no download).
import { existsSync, mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { getLlama, type Llama, LlamaLogLevel, type LlamaModel, resolveModelFile } from "node-llama-cpp";
import type { Logger } from "../log.js";
import { TINY_SHAPE, writeRandomModel } from "./random-model.js";
import { UserError } from "../errors.js";

export class ModelError extends UserError {
  override name = "ModelError";
}

export const TINY_MODEL_FILE = "psyche-tiny.gguf";

/** Where `tiny` lives: generated on first use, deterministic, under 1 MB. */
export function ensureTinyModel(dataDir: string): string {
  const dir = join(dataDir, "models");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, TINY_MODEL_FILE);
  if (!existsSync(path)) writeRandomModel(path, TINY_SHAPE);
  return path;
}

/** Resolves `--model` to a local file path, downloading an `hf:` URI if needed. */
export async function resolveModelPath(spec: string, dataDir: string, opts: { interactive?: boolean } = {}): Promise<string> {
  if (spec === "tiny") return ensureTinyModel(dataDir);
  if (/^(hf:|https?:)/.test(spec)) {
    const directory = join(dataDir, "models");
    mkdirSync(directory, { recursive: true });
    try {
      return await resolveModelFile(spec, { directory, cli: opts.interactive ?? process.stderr.isTTY === true });
    } catch (err) {
      throw new ModelError(
        `could not download ${spec}: ${(err as Error).message}. If this machine is offline, pass --model with ` +
          `a local .gguf file, or --model tiny to try Psyche with a small generated model`,
        { cause: err },
      );
    }
  }
  const path = resolve(spec);
  if (!existsSync(path)) {
    throw new ModelError(`model file not found: ${path}. Pass --model with a .gguf file, an hf: URI, or tiny`);
  }
  return path;
}

export async function loadLlama(gpu: string, log: Logger): Promise<Llama> {
  return getLlama({
    gpu: gpu === "false" ? false : (gpu as "auto" | "cuda" | "vulkan" | "metal"),
    // Prebuilt binaries only: never compile or download at run time.
    build: "never",
    logLevel: LlamaLogLevel.warn,
    logger: (level, message) => {
      const text = message.trim();
      if (!text) return;
      if (level === LlamaLogLevel.error || level === LlamaLogLevel.fatal) log.error({ llama: true }, text);
      else log.debug({ llama: true }, text);
    },
  });
}

export async function loadModelFile(llama: Llama, path: string): Promise<LlamaModel> {
  try {
    return await llama.loadModel({ modelPath: path });
  } catch (err) {
    throw new ModelError(`cannot load ${basename(path)} as a GGUF model: ${(err as Error).message}`, { cause: err });
  }
}

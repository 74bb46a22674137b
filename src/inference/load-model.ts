// Turns `--model` into a loaded model: a GGUF path, an `hf:` URI (downloaded once into the
// data directory, with a progress bar), or `tiny` (generated here, no download).
import { existsSync, mkdirSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Llama, LlamaModel } from "node-llama-cpp";
import type { Logger } from "../log.js";
import { TINY_AGENT_SHAPE, TINY_SHAPE, writeRandomModel } from "./random-model.js";
import { UserError } from "../errors.js";
import { cacheModelTokenizer } from "./token-cache.js";
import { type Family, familyNamed, familyNames } from "./families/families.js";
import { writeFamilyModel } from "./families/family-model.js";

/**
 * node-llama-cpp, loaded when a model is first resolved or loaded: a process that only serves
 * the API or the built-in embedder (psyche web) never pays for its bindings (half a second).
 */
const engineLibrary = () => import("node-llama-cpp");

export class ModelError extends UserError {
  override name = "ModelError";
}

export const TINY_MODEL_FILE = "psyche-tiny.gguf";

/** The generated models `--model` names: `tiny` (under 1 MB) and `tiny-agent` (a real tokenizer, a 32k context). */
const GENERATED = {
  tiny: { file: TINY_MODEL_FILE, shape: TINY_SHAPE },
  "tiny-agent": { file: "psyche-tiny-agent.gguf", shape: TINY_AGENT_SHAPE },
} as const;
/** `tiny`, `tiny-agent` or `tiny-<family>` (inference/families/families.ts): made here, never downloaded. */
export const isGenerated = (spec: string): boolean => Object.hasOwn(GENERATED, spec) || familyOf(spec) !== undefined;

/** The family a `tiny-<family>` spec names. */
export const familyOf = (spec: string): Family | undefined => (spec.startsWith("tiny-") ? familyNamed(spec.slice(5)) : undefined);

/** A family's test model in the data directory: made on first use (seconds), written whole or not at all. */
export async function ensureFamilyModel(dataDir: string, family: Family): Promise<string> {
  const dir = join(dataDir, "models");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `psyche-tiny-${family.name}.gguf`);
  if (!existsSync(path)) await writeFamilyModel(path, family, join(dataDir, "cache"));
  return path;
}

/** Where a generated model lives: made on first use, deterministic, written whole or not at all. */
export function ensureTinyModel(dataDir: string, kind: keyof typeof GENERATED = "tiny"): string {
  const dir = join(dataDir, "models");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, GENERATED[kind].file);
  if (!existsSync(path)) writeRandomModel(path, GENERATED[kind].shape);
  return path;
}

export interface DownloadOptions {
  /** Show a progress bar (default: when stderr is a terminal). */
  interactive?: boolean;
  /** Where `hf:` URIs are fetched from (node-llama-cpp's default: the Hugging Face hub). */
  endpoint?: string | undefined;
  /**
   * Give up when the download has not finished in this long (`total`), or when no bytes have
   * come for this long (`stall`). Unset: wait as long as it takes.
   */
  limit?: { kind: "total" | "stall"; ms: number } | undefined;
  log?: Logger | undefined;
  /** How far the download is, as it goes (Ollama's /api/pull streams it). */
  onProgress?: ((p: { total: number; completed: number }) => void) | undefined;
  /** Stops the download. */
  signal?: AbortSignal | undefined;
}

const isRemote = (spec: string) => /^(hf:|https?:)/.test(spec);

/** Where a remote model is fetched from, for messages. */
export function downloadSource(spec: string, endpoint: string | undefined): string {
  if (!spec.startsWith("hf:")) return new URL(spec).origin;
  return endpoint ?? process.env.HF_ENDPOINT ?? process.env.MODEL_ENDPOINT ?? "https://huggingface.co";
}

/** A remote model already downloaded into the data directory; looks at no network. */
export async function localModelCopy(spec: string, dataDir: string, endpoint?: string): Promise<string | undefined> {
  if (!isRemote(spec)) return undefined;
  try {
    const { resolveModelFile } = await engineLibrary();
    return await resolveModelFile(spec, {
      directory: join(dataDir, "models"),
      download: false,
      cli: false,
      ...(endpoint ? { endpoints: { huggingFace: endpoint } } : {}),
    });
  } catch {
    return undefined;
  }
}

/**
 * Resolves `--model` to a local file path: a file, `tiny`, or a remote URI already downloaded
 * into the data directory, else downloaded now, saying what and from where, within `limit`.
 */
export async function resolveModelPath(spec: string, dataDir: string, opts: DownloadOptions = {}): Promise<string> {
  const family = familyOf(spec);
  if (family) return ensureFamilyModel(dataDir, family);
  if (spec === "tiny" || spec === "tiny-agent") return ensureTinyModel(dataDir, spec);
  if (isRemote(spec)) {
    const local = await localModelCopy(spec, dataDir, opts.endpoint);
    if (local) return local;
    return downloadModel(spec, dataDir, opts);
  }
  const path = resolve(spec);
  if (!existsSync(path)) {
    throw new ModelError(
      `model file not found: ${path}. Pass --model with a .gguf file, an hf: URI, tiny, tiny-agent or tiny-<family> (${familyNames().join(", ")})`,
    );
  }
  return path;
}

/** Downloads a remote model into the data directory (`psyche model pull`, and start-up). */
export async function downloadModel(spec: string, dataDir: string, opts: DownloadOptions = {}): Promise<string> {
  const directory = join(dataDir, "models");
  mkdirSync(directory, { recursive: true });
  const from = downloadSource(spec, opts.endpoint);
  const seconds = opts.limit ? Math.round(opts.limit.ms / 1000) : undefined;
  opts.log?.info(
    {
      model: spec,
      from,
      directory,
      ...(opts.limit ? { [opts.limit.kind === "total" ? "atMostSeconds" : "giveUpAfterSilentSeconds"]: seconds } : {}),
    },
    `downloading ${spec} from ${from}`,
  );
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (!opts.limit) return;
    clearTimeout(timer);
    const why = opts.limit.kind === "total" ? `it did not finish within ${seconds} s` : `nothing arrived for ${seconds} s`;
    timer = setTimeout(() => controller.abort(new ModelError(why)), opts.limit.ms);
  };
  // node-llama-cpp does not stop a request that gets no answer on its signal alone: race it.
  const aborted = new Promise<never>((_, reject) =>
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason as Error), { once: true }),
  );
  arm();
  const stopped = () => controller.abort(new ModelError("the download was stopped"));
  opts.signal?.addEventListener("abort", stopped, { once: true });
  try {
    return await Promise.race([
      (await engineLibrary()).resolveModelFile(spec, {
        directory,
        cli: opts.interactive ?? process.stderr.isTTY === true,
        signal: controller.signal,
        ...(opts.endpoint ? { endpoints: { huggingFace: opts.endpoint } } : {}),
        onProgress: ({ totalSize, downloadedSize }: { totalSize: number; downloadedSize: number }) => {
          if (opts.limit?.kind === "stall") arm();
          opts.onProgress?.({ total: totalSize, completed: downloadedSize });
        },
      }),
      aborted,
    ]);
  } catch (err) {
    throw new ModelError(
      `could not download ${spec} from ${from}: ${(err as Error).message}. Fetch it ahead with \`psyche model pull ${spec}\`, ` +
        `or pass a local .gguf file (or tiny, a small generated model, to try Psyche offline)`,
      { cause: err },
    );
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", stopped);
  }
}

export async function loadLlama(gpu: string, log: Logger): Promise<Llama> {
  const { getLlama, LlamaLogLevel } = await engineLibrary();
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
    const model = await llama.loadModel({ modelPath: path });
    // Long prompts come back turn after turn: tokenized once (inference/token-cache.ts).
    cacheModelTokenizer(model);
    return model;
  } catch (err) {
    throw new ModelError(`cannot load ${basename(path)} as a GGUF model: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * The model's tokenizer alone (its vocabulary, no weights), for a process that answers token
 * counts without running the model (a separate `psyche web`). Looks only at local files: a
 * remote model not yet downloaded gives undefined, never a download.
 */
export async function loadTokenizer(spec: string, dataDir: string, log: Logger): Promise<((text: string) => number) | undefined> {
  const path = isGenerated(spec)
    ? await resolveModelPath(spec, dataDir)
    : isRemote(spec)
      ? await localModelCopy(spec, dataDir)
      : existsSync(resolve(spec))
        ? resolve(spec)
        : undefined;
  if (!path) return undefined;
  const llama = await loadLlama("false", log);
  const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
  const tokenizer = cacheModelTokenizer(model);
  return (text) => tokenizer(text).length;
}

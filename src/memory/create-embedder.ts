// Turns `--embedding-model` into a running Embedder (piscina threads).
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { downloadSource, isGenerated, localModelCopy, ModelError, resolveModelPath } from "../inference/load-model.js";
import type { EmbedSpec } from "./embed-task.js";
import { type Embedder, ThreadEmbedder } from "./embedder.js";

/** A small English embedding model (bge-small-en-v1.5, 384 dimensions, ~36 MB), the `auto` choice. */
export const DEFAULT_EMBEDDING_MODEL = "hf:ChristianAzinn/bge-small-en-v1.5-gguf/bge-small-en-v1.5.Q8_0.gguf";

type EmbedderConfig = Pick<Config, "embeddingModel" | "embeddingThreads" | "model" | "dataDir"> &
  Partial<Pick<Config, "hfEndpoint" | "downloadTimeoutSeconds">>;

/**
 * Throws when `origin` cannot be reached at all (no route, no name, refused): no download can
 * work, so none is tried. A hub that is merely slow to answer within `ms` gets the download's
 * own bounded try.
 */
async function reachable(origin: string, ms: number): Promise<void> {
  try {
    await fetch(origin, { method: "HEAD", signal: AbortSignal.timeout(ms) });
  } catch (err) {
    if ((err as Error).name === "TimeoutError") return;
    throw new ModelError(`${origin} cannot be reached (${(err as Error).message})`);
  }
}

export async function resolveEmbedSpec(config: EmbedderConfig, log: Logger): Promise<EmbedSpec> {
  const choice = config.embeddingModel;
  if (choice === "builtin") return { kind: "lexical" };
  if (choice === "auto") {
    // Trying Psyche offline with a generated model: no download for embeddings either.
    if (isGenerated(config.model)) return { kind: "lexical" };
    // Start-up must not hang on a hub it cannot reach: a quick look first, a bounded try, then
    // the built-in embedder (docs/decisions.md, "The embedding model's download").
    try {
      const local = await localModelCopy(DEFAULT_EMBEDDING_MODEL, config.dataDir, config.hfEndpoint);
      if (!local) await reachable(downloadSource(DEFAULT_EMBEDDING_MODEL, config.hfEndpoint), 2000);
      const limit = { kind: "total" as const, ms: (config.downloadTimeoutSeconds ?? 10) * 1000 };
      return {
        kind: "gguf",
        path: await resolveModelPath(DEFAULT_EMBEDDING_MODEL, config.dataDir, {
          endpoint: config.hfEndpoint,
          limit,
          log,
          interactive: false,
        }),
        name: DEFAULT_EMBEDDING_MODEL,
      };
    } catch (err) {
      log.warn(
        { reason: (err as Error).message },
        `using the built-in embedder: the default embedding model could not be had (psyche model pull ${DEFAULT_EMBEDDING_MODEL} fetches it ahead; or set --embedding-model to a .gguf file, or builtin)`,
      );
      return { kind: "lexical" };
    }
  }
  try {
    const path = await resolveModelPath(choice, config.dataDir, {
      endpoint: config.hfEndpoint,
      limit: { kind: "stall", ms: (config.downloadTimeoutSeconds ?? 10) * 1000 },
      log,
    });
    return { kind: "gguf", path, name: choice === "tiny" ? "psyche-tiny" : path };
  } catch (err) {
    throw new ModelError(`--embedding-model: ${(err as Error).message.replace(/--model/g, "--embedding-model")}; or use builtin`, {
      cause: err,
    });
  }
}

export async function createEmbedder(config: EmbedderConfig, log: Logger): Promise<Embedder> {
  const spec = await resolveEmbedSpec(config, log);
  const embedder = await ThreadEmbedder.start(spec, config.embeddingThreads);
  log.info({ embedder: embedder.id, dimensions: embedder.dimensions, threads: config.embeddingThreads }, "embedder ready");
  return embedder;
}

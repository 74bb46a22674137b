// One Embedder interface over piscina threads (workers/threads/embed.ts). Every memory records
// the embedder's id; vectors from different ids are never compared.
import { basename } from "node:path";
import type { EmbedSpec, EmbedTask, EmbedTaskResult } from "./embed-task.js";
import { LEXICAL_DIMENSIONS, LEXICAL_EMBEDDER_ID } from "./lexical-embedding.js";
import { ThreadPool } from "./thread-pool.js";
import { UserError, type UserErrorOptions } from "../errors.js";

export interface Embedder {
  /** Names the model that makes the vectors; safe to put in SQL text (see embedderId). */
  readonly id: string;
  readonly dimensions: number;
  /** Unit-length vectors, one per text. Aborting rejects at once; threads stop between texts. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
  close(): Promise<void>;
}

export class EmbedderError extends UserError {
  override name = "EmbedderError";
  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { status: 503, code: "embedder_failed", ...opts });
  }
}

/** Ids go into SQL text (partial indexes are chosen by literal), so keep them plain. */
export function embedderId(spec: EmbedSpec, dimensions: number): string {
  if (spec.kind === "lexical") return LEXICAL_EMBEDDER_ID;
  const name = basename(spec.name)
    .replace(/\.gguf$/i, "")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .slice(0, 80);
  return `gguf-${name}-${dimensions}`;
}

export class ThreadEmbedder implements Embedder {
  private constructor(
    private readonly threadPool: ThreadPool,
    readonly id: string,
    readonly dimensions: number,
    private readonly threads: number,
  ) {}

  /** Starts `threads` threads and embeds one probe text to learn the dimensions. */
  static async start(spec: EmbedSpec, threads: number): Promise<ThreadEmbedder> {
    const threadPool = new ThreadPool("embed", threads, spec);
    const { pool } = threadPool;
    try {
      const probe = (await pool.run({ texts: ["dimensions"] } satisfies EmbedTask)) as EmbedTaskResult;
      const dimensions = probe.vectors[0]?.length ?? 0;
      if (spec.kind === "lexical" && dimensions !== LEXICAL_DIMENSIONS) throw new EmbedderError("lexical embedder gave the wrong size");
      if (dimensions < 1 || dimensions > 16000) throw new EmbedderError(`embedding model gives ${dimensions}-dimensional vectors`);
      return new ThreadEmbedder(threadPool, embedderId(spec, dimensions), dimensions, threads);
    } catch (err) {
      await threadPool.close();
      if (err instanceof EmbedderError) throw err;
      const what = spec.kind === "gguf" ? `embedding model ${spec.name}` : "built-in embedder";
      throw new EmbedderError(`cannot start the ${what}: ${(err as Error).message}`, { cause: err });
    }
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    // Spread a batch over the threads; each chunk is one task.
    const size = Math.ceil(texts.length / Math.min(this.threads, texts.length));
    const chunks: string[][] = [];
    for (let i = 0; i < texts.length; i += size) chunks.push(texts.slice(i, i + size));
    const cancel = new SharedArrayBuffer(4);
    const runs = Promise.all(
      chunks.map((chunk) => this.threadPool.pool.run({ texts: chunk, cancel } satisfies EmbedTask) as Promise<EmbedTaskResult>),
    ).catch((err: unknown) => {
      throw new EmbedderError(`embedding with ${this.id} failed: ${(err as Error).message}`, { cause: err });
    });
    if (!signal) return flatten(await runs);
    // Piscina's own abort terminates a running thread, which would take the process down
    // inside a native call; this flag lets each task stop itself between two texts instead.
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        Atomics.store(new Int32Array(cancel), 0, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      runs.then(
        (results) => {
          signal.removeEventListener("abort", onAbort);
          resolve(flatten(results));
        },
        (err) => {
          signal.removeEventListener("abort", onAbort);
          reject(err);
        },
      );
    });
  }

  close(): Promise<void> {
    return this.threadPool.close();
  }
}

function flatten(results: EmbedTaskResult[]): number[][] {
  return results.flatMap((r) => r.vectors.map((v) => Array.from(v)));
}

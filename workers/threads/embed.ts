// An embedding thread (piscina). It loads its embedder once, on its first task, and keeps it:
// loading a GGUF model costs about a second. A cancelled task stops between two texts; a
// thread is never terminated inside a native call (that aborts the whole process).
import { workerData } from "node:worker_threads";
import type { LlamaEmbeddingContext } from "node-llama-cpp";
import { EmbedSpecSchema, type EmbedSpec, type EmbedTaskResult, EmbedTaskSchema } from "../../src/memory/embed-task.js";
import { lexicalEmbedding } from "../../src/memory/lexical-embedding.js";
import { parseTask } from "../../src/memory/parse-task.js";
import { sayLoaded } from "../../src/memory/thread-loaded.js";

type EmbedOne = (text: string) => Promise<Float32Array>;

const unit = (v: ArrayLike<number>): Float32Array => {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
  norm = Math.sqrt(norm);
  return Float32Array.from(v, (x) => (norm > 0 ? x / norm : 0));
};

async function ggufEmbedder(path: string): Promise<EmbedOne> {
  // Loaded only for a GGUF model: the built-in embedder's threads then start without the engine's bindings.
  const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: path });
  const contextSize = Math.min(2048, model.trainContextSize);
  // One CPU thread per piscina thread: the pool's size is the parallelism.
  const context: LlamaEmbeddingContext = await model.createEmbeddingContext({ contextSize, threads: 1 });
  return async (text) => {
    // Longer texts are embedded by their beginning: the context holds no more.
    const tokens = model.tokenize(text).slice(0, contextSize - 2); // room for BOS/EOS
    if (tokens.length === 0) return new Float32Array(model.embeddingVectorSize);
    return unit((await context.getEmbeddingFor(tokens)).vector);
  };
}

function start(spec: EmbedSpec): Promise<EmbedOne> {
  if (spec.kind === "lexical") return Promise.resolve(async (text) => Float32Array.from(lexicalEmbedding(text)));
  return ggufEmbedder(spec.path);
}

let embedder: Promise<EmbedOne> | undefined;

export default async function embed(task: unknown): Promise<EmbedTaskResult> {
  const { texts, cancel } = parseTask(EmbedTaskSchema, task);
  embedder ??= start(parseTask(EmbedSpecSchema, workerData));
  const one = await embedder;
  const flag = cancel ? new Int32Array(cancel) : undefined;
  const vectors: Float32Array[] = [];
  for (const text of texts) {
    if (flag && Atomics.load(flag, 0) !== 0) return { vectors, cancelled: true };
    vectors.push(await one(text));
  }
  return { vectors, cancelled: false };
}

sayLoaded();

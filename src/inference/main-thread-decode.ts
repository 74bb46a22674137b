// Whether the context decodes on the JavaScript thread itself (the patched addon's
// `decodeBatchAndSampleNow`, inference/llama-internals.ts) instead of in a hop to libuv's pool
// and back. The hop is two wake-ups of a sleeping thread, tens of microseconds on a busy CPU:
// nothing beside a step of 17-30 ms, but a good part of a step of a few hundred microseconds (the
// tiny model's; docs/benchmarks.md, "Without the hop"). While a decode runs on the JavaScript
// thread nothing else there does (HTTP, the embedded database), so only a model whose batches are
// short decodes there.
//
// Decided once, before the first decode, and never changed by the server: the CPU backend's
// OpenMP team is the calling thread's, and once two threads have decoded there are two teams. Their
// threads outnumber two cores, and libgomp then spins only briefly at the barriers between a
// pass's operations before it sleeps: the tiny model decoded one stream at 330-430 tokens a second
// on the JavaScript thread after a warm-up in the hop, against some 2,000 either way alone
// (docs/benchmarks.md). So the choice cannot wait for a decode to be timed: it is made from the
// model's size, and the other engines of a process follow the first one's.

/** `auto`: on the JavaScript thread where the model is small enough (below); true: always; false: never. */
export type MainThreadDecode = "auto" | boolean;

/**
 * On a CPU, the largest model file auto decodes on the JavaScript thread: some 16 million
 * weights at 8 bits, whose step takes about a millisecond on two cores and a batch of 512
 * tokens some tens. The tiny model (0.5 MB) steps in about 0.3 ms; the bench model (0.5 GB) in
 * 17-30, where the hop is nothing.
 */
export const CPU_MAX_MODEL_BYTES = 16 * 2 ** 20;

export interface MainThreadDecodeInput {
  mode: MainThreadDecode;
  /** Whether the model runs on a GPU. */
  gpu: boolean;
  /** The model file's size. */
  modelBytes: number;
}

/**
 * Whether the engine decodes on the JavaScript thread. Auto on a GPU keeps the hop: a GPU's
 * batch of a real model reads for tens to hundreds of milliseconds, and the way has not been
 * measured on one (docs/configuration.md says how to try it).
 */
export function decodeOnMainThread({ mode, gpu, modelBytes }: MainThreadDecodeInput): boolean {
  if (mode !== "auto") return mode;
  return !gpu && modelBytes <= CPU_MAX_MODEL_BYTES;
}

/** The first engine's choice in this process. */
let thisProcess: boolean | undefined;

/**
 * decodeOnMainThread for an engine of this process: in auto, whatever the process's first engine
 * chose, so that its engines' decodes come from one thread (a process with several, as tests
 * and the bench have, models of several sizes among them).
 */
export function decodeOnMainThreadHere(input: MainThreadDecodeInput): boolean {
  const choice = input.mode === "auto" && thisProcess !== undefined ? thisProcess : decodeOnMainThread(input);
  thisProcess ??= choice;
  return choice;
}

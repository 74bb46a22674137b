// How many chat slots (--parallel) the engine gets when the user names none. On a CPU, four:
// the cores are the limit, and four is what llama-server's -np 4 is measured against
// (docs/benchmarks.md). On a GPU, throughput grows with the slots decoded together, so as many as
// the free GPU memory holds, each with its own context and one more sequence for dreams, and never
// fewer than four (node-llama-cpp then fits the context to the memory, as with one slot).

export const CPU_PARALLEL = 4;
export const MAX_PARALLEL = 64;
/** Of the GPU memory free after the model is loaded: the rest is left for compute buffers and other programs. */
const GPU_SHARE = 0.9;

export interface ParallelChoice {
  parallel: number;
  /** Said in the start-up log and docs/configuration.md. */
  why: string;
}

export interface ParallelFacts {
  /** --parallel, when given. */
  requested: number | undefined;
  /** Whether the model runs on a GPU. */
  gpu: boolean;
  /** GPU memory free now, with the model loaded (bytes). */
  freeGpuBytes: number;
  /** GPU memory a context of `sequences` sequences needs (bytes). */
  gpuBytesFor: (sequences: number) => Promise<number>;
}

export async function chooseParallel(f: ParallelFacts): Promise<ParallelChoice> {
  if (f.requested !== undefined) return { parallel: f.requested, why: "--parallel" };
  if (!f.gpu) return { parallel: CPU_PARALLEL, why: "a CPU: the default" };
  const budget = f.freeGpuBytes * GPU_SHARE;
  const fits = async (n: number) => (await f.gpuBytesFor(n + 1)) <= budget;
  if (!(await fits(CPU_PARALLEL)))
    return { parallel: CPU_PARALLEL, why: "a GPU with room for fewer: the default, the context fitted to it" };
  // The largest that fits, by bisection: an estimate costs a few milliseconds.
  let lo = CPU_PARALLEL;
  let hi = MAX_PARALLEL;
  if (await fits(hi)) lo = hi;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await fits(mid)) lo = mid;
    else hi = mid;
  }
  return { parallel: lo, why: `a GPU: as many as ${Math.round(budget / 2 ** 20)} MiB of free GPU memory holds` };
}

// Said by each memory thread (workers/threads/) once its module has loaded, and heard by
// memory/thread-pool.ts: a thread is not terminated before then.
import { parentPort } from "node:worker_threads";

export const THREAD_LOADED = "psyche:thread-loaded";

/** Called last in a thread's module: its whole module graph has been instantiated and run. */
export function sayLoaded(): void {
  parentPort?.postMessage(THREAD_LOADED);
}

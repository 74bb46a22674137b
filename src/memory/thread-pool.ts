// A piscina pool of memory threads (workers/threads/), closed only once every thread has
// loaded its module. Node 20 aborts the whole process (SIGABRT, a fatal error in
// ModuleWrap::InstantiateSync) when a worker is terminated while piscina's require() of an ES
// module is instantiating it: `psyche serve` stopped right after it started, with a thread
// still loading, died that way (test/e2e/offline-start.test.ts on CI). Each thread says when it
// has loaded (memory/thread-loaded.ts); closing waits for that, within a limit, then destroys.
import { Piscina } from "piscina";
import { threadFile } from "./thread-file.js";
import { THREAD_LOADED } from "./thread-loaded.js";

/** How long closing waits for threads still loading before terminating them anyway. */
const LOAD_WAIT_MS = 10_000;

export class ThreadPool {
  readonly pool: Piscina;
  private loaded = 0;
  private heard: (() => void) | undefined;

  constructor(
    name: "embed" | "score",
    private readonly threads: number,
    workerData?: unknown,
  ) {
    this.pool = new Piscina({
      filename: threadFile(name).href,
      ...(workerData === undefined ? {} : { workerData }),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
    this.pool.on("message", (message: unknown) => {
      if (message !== THREAD_LOADED) return;
      this.loaded++;
      this.heard?.();
    });
  }

  /** Threads that have said they loaded. */
  get loadedThreads(): number {
    return this.loaded;
  }

  async close(): Promise<void> {
    if (this.loaded < this.threads) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, LOAD_WAIT_MS);
        this.heard = () => {
          if (this.loaded < this.threads) return;
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await this.pool.destroy();
  }
}

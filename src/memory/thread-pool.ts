// A piscina pool of memory threads (workers/threads/), closed only once every thread has
// loaded its module. Node 20 aborts the whole process (SIGABRT, a fatal error in
// ModuleWrap::InstantiateSync) when a worker is terminated while piscina's require() of an ES
// module is instantiating it: `psyche serve` stopped right after it started, with a thread
// still loading, died that way (test/e2e/offline-start.test.ts on CI). Each thread says when it
// has loaded (memory/thread-loaded.ts); closing waits for that, within a limit, then destroys.
import { Piscina } from "piscina";
import { THREAD_LOADED } from "./thread-loaded.js";
import { threadExecArgv, threadFile } from "../thread-file.js";

/** How long closing waits for threads still loading before terminating them anyway. */
const LOAD_WAIT_MS = 10_000;

export class ThreadPool {
  readonly pool: Piscina;
  private loaded = 0;
  /** Settles once every thread has said it loaded. */
  private readonly allLoaded: Promise<void>;

  constructor(name: "embed" | "score", threads: number, workerData?: unknown) {
    this.pool = new Piscina({
      filename: threadFile(name).href,
      execArgv: threadExecArgv(),
      ...(workerData === undefined ? {} : { workerData }),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
    this.allLoaded = new Promise<void>((resolve) => {
      this.pool.on("message", (message: unknown) => {
        if (message === THREAD_LOADED && ++this.loaded >= threads) resolve();
      });
    });
  }

  /** Threads that have said they loaded. */
  get loadedThreads(): number {
    return this.loaded;
  }

  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.allLoaded, new Promise<void>((resolve) => (timer = setTimeout(resolve, LOAD_WAIT_MS)))]);
    clearTimeout(timer);
    await this.pool.destroy();
  }
}

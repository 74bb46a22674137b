// A piscina pool of memory threads (workers/threads/), closed only once every thread has
// loaded its module. Node 20 aborts the whole process (SIGABRT, a fatal error in
// ModuleWrap::InstantiateSync) when a worker is terminated while piscina's require() of an ES
// module is instantiating it: `psyche serve` stopped right after it started, with a thread
// still loading, died that way (test/e2e/offline-start.test.ts on CI). Each thread says when it
// has loaded (memory/thread-loaded.ts); closing waits for that, within a limit, then destroys.
import { Piscina } from "piscina";
import { THREAD_LOADED } from "./thread-loaded.js";

/**
 * Piscina threads run compiled JavaScript. From the build (dist/src/...) the thread files sit
 * beside it in dist/workers/threads; from the TypeScript sources (tests) they are the build's.
 */
function threadFile(name: "embed" | "score"): URL {
  const here = import.meta.url;
  return here.endsWith(".ts") ? new URL(`../../dist/workers/threads/${name}.js`, here) : new URL(`../../workers/threads/${name}.js`, here);
}

/** Where Node has require(esm) (20.19 on), the flag that turns it off for a thread. */
const NO_REQUIRE_ESM = process.allowedNodeEnvironmentFlags.has("--experimental-require-module") ? ["--no-experimental-require-module"] : [];

/**
 * The process's flags without the module loaders it was started with (tsx, when the tests run
 * the TypeScript sources): the threads run compiled JavaScript, and a loader in each only slowed
 * its start, two to three times (docs/developing.md, "Test tiers"). And without require(esm):
 * piscina tries require() before import(), and Node 20's require of an ES module in a thread
 * aborted the whole process (a fatal ModuleWrap error) with no termination near it, once in a
 * while under load (test/memory/thread-pool.test.ts); refused, piscina imports it.
 */
export function threadExecArgv(argv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (/^--(import|loader|experimental-loader|require)$/.test(arg) || arg === "-r") i++;
    else if (!/^--(import|loader|experimental-loader|require)=/.test(arg) && !/require-module$/.test(arg)) out.push(arg);
  }
  return [...out, ...NO_REQUIRE_ESM];
}

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

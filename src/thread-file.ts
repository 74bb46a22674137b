// Where a thread's module is, and the flags it starts with: the memory threads (piscina,
// memory/thread-pool.ts) and the embedded database's thread (db/embedded.ts) run compiled
// JavaScript from workers/threads/.

/**
 * From the build (dist/src/...) the thread files sit beside it in dist/workers/threads; from the
 * TypeScript sources (tests) they are the build's.
 */
export function threadFile(name: "embed" | "score" | "embedded-database"): URL {
  const here = import.meta.url;
  return here.endsWith(".ts") ? new URL(`../dist/workers/threads/${name}.js`, here) : new URL(`../workers/threads/${name}.js`, here);
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

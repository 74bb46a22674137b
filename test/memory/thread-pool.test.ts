// Memory threads are not terminated while they load: Node 20 aborts the whole process when a
// worker is terminated inside require(esm)'s instantiation (memory/thread-pool.ts). Closing
// right after starting waits for every thread to say it loaded, then destroys the pool.
import t from "tap";
import { ThreadPool } from "../../src/memory/thread-pool.js";
import { threadExecArgv } from "../../src/thread-file.js";
import { ThreadScorer } from "../../src/memory/scorer.js";
import { ThreadEmbedder } from "../../src/memory/embedder.js";

t.test("a pool closed as soon as it is made: every thread loaded first", async (t) => {
  for (const [name, data] of [
    ["embed", { kind: "lexical" }],
    ["score", undefined],
  ] as const) {
    const threads = new ThreadPool(name, 3, data);
    t.equal(threads.loadedThreads, 0, `${name}: nothing loaded yet`);
    await threads.close();
    t.equal(threads.loadedThreads, 3, `${name}: all three threads had loaded when the pool was destroyed`);
    t.equal(threads.pool.threads.length, 0, `${name}: and none is left`);
  }
});

t.test("the scorer and the embedder close the same way, and work before", async (t) => {
  const scorer = new ThreadScorer(2);
  const scored = await scorer.score({ text: "I love this, thank you so much!", toolCalls: 0, maxSimilarity: 0 });
  t.ok(scored.importance >= 0 && scored.importance <= 1, "a score");
  await scorer.close();
  t.equal(scorer.threads.loadedThreads, 2);

  const embedder = await ThreadEmbedder.start({ kind: "lexical" }, 2);
  t.equal((await embedder.embed(["a cat on a mat"]))[0]?.length, embedder.dimensions);
  await embedder.close();
  await embedder.close();
  t.pass("closing twice is harmless");
});

const noRequireEsm = process.allowedNodeEnvironmentFlags.has("--experimental-require-module") ? ["--no-experimental-require-module"] : [];

t.test("the threads start without the loaders the process was started with", async (t) => {
  t.same(threadExecArgv(["--import=tsx", "--enable-source-maps", "--import", "x.mjs", "-r", "y", "--max-old-space-size=99"]), [
    "--enable-source-maps",
    "--max-old-space-size=99",
    ...noRequireEsm,
  ]);
  t.same(threadExecArgv(["--experimental-require-module"]), noRequireEsm, "require(esm) stays off in the threads");
  t.same(threadExecArgv([]), noRequireEsm);
});

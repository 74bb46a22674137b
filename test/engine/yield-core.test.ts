// The core a batch leaves to the JavaScript thread while this process takes a turn in
// (src/inference/core-share.ts, llama-internals.ts `threadsPerBatch`): the real engine on the
// tiny model, told it has two cores for its two threads, decodes a generation's batches with
// one thread while a turn is taken in and with two otherwise, and says the same either way;
// with more cores than threads, batches longer than the limit, or the setting off, every batch
// has the threads asked for. The limit is set wide (or to nothing) here: a loaded machine's
// batches must not decide what the test sees.
import t, { type Test } from "tap";
import type { LlamaEngine } from "../../src/inference/llama-engine.js";
import { seededAsk as ask } from "../helpers/seeded-ask.js";
import { modelOf } from "../helpers/model-of.js";
import { tinyEngine } from "../helpers/tiny-engine.js";

const question = ask("a lighthouse keeper's log", 11, { maxTokens: 24 });

t.test("two threads on two cores: one while a turn is taken in, two after, the same reply", async (t) => {
  const { engine } = await tinyEngine(t, { yieldCore: true, cores: 2, shortBatchMs: 60_000 });
  const counts = engine.batchThreads;
  t.ok(counts, "the context's threads are set per batch");
  if (!counts) return;
  const alone = await modelOf(engine).generate(question);
  t.equal(counts.fewer, 0, "nothing taken in: every batch on both threads");
  t.ok(counts.asked > 0, `batches decoded (${counts.asked})`);
  const before = { ...counts };
  const done = engine.takingIn();
  const beside = await modelOf(engine).generate(question);
  done();
  // Each batch's size was measured in the first reply (the same prompt, the same steps): none is unknown.
  t.ok(counts.fewer > 0, `while a turn was taken in, batches on one thread (${counts.fewer})`);
  t.equal(counts.asked, before.asked, "and none on both");
  t.equal(beside.text, alone.text, "the same reply on one thread as on two");
  const after = { ...counts };
  await modelOf(engine).generate(question);
  t.equal(counts.fewer, after.fewer, "once taken in, both threads again");
  t.ok(counts.asked > after.asked);
});

/** A reply generated while a turn is taken in: every batch on the threads asked for. */
async function everyThread(t: Test, engine: LlamaEngine): Promise<void> {
  const done = engine.takingIn();
  await modelOf(engine).generate(question);
  done();
  t.equal(engine.batchThreads?.fewer, 0);
  t.ok((engine.batchThreads?.asked ?? 0) > 0);
}

t.test("batches longer than the limit: every thread, a turn taken in or not", async (t) => {
  const { engine } = await tinyEngine(t, { yieldCore: true, cores: 2, shortBatchMs: 0 });
  await modelOf(engine).generate(question);
  await everyThread(t, engine);
});

t.test("nothing measured yet: a batch is taken as long", async (t) => {
  const { engine } = await tinyEngine(t, { yieldCore: true, cores: 2, shortBatchMs: 60_000 });
  const done = engine.takingIn();
  const reply = await modelOf(engine).generate(ask("a first question", 3, { maxTokens: 1 }));
  done();
  t.equal(reply.completionTokens, 1);
  t.equal(engine.batchThreads?.fewer, 0, "the prompt's batch, the first, on both threads");
  t.ok((engine.batchThreads?.asked ?? 0) >= 1);
});

t.test("more cores than threads: every batch as asked, a turn taken in or not", async (t) => {
  const { engine } = await tinyEngine(t, { yieldCore: true, cores: 4 });
  await everyThread(t, engine);
});

t.test("off: the threads left as node-llama-cpp sets them", async (t) => {
  const { engine } = await tinyEngine(t, { yieldCore: false, cores: 2 });
  t.equal(engine.batchThreads, undefined);
  const done = engine.takingIn();
  t.ok((await modelOf(engine).generate(question)).completionTokens > 0);
  done();
});

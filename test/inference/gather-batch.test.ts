// The batch schedule (src/inference/gather-batch.ts), with the context's counts scripted: a
// batch goes once every generating sequence has queued, waits for a straggler at most its
// limit counted from the end of the batch under way, and goes at once where the queue cannot
// be seen. The real context's batches are in test/engine/parallel-slots.test.ts.
import t from "tap";
import { BatchGather } from "../../src/inference/gather-batch.js";

const turn = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function scripted(maxWaitMs: number, start: { generating: number; queued: number | undefined; underWay?: boolean }) {
  const state = { underWay: false, ...start };
  const gather = new BatchGather({
    queued: () => state.queued,
    generating: () => state.generating,
    underWay: () => state.underWay,
    maxWaitMs,
  });
  let dispatched = 0;
  gather.schedule(() => dispatched++);
  return { state, gather, dispatched: () => dispatched };
}

/** Dispatched by the second turn of the event loop (the schedule's first look is on the first). */
async function dispatchedSoon(s: ReturnType<typeof scripted>): Promise<number> {
  await turn();
  await turn();
  return s.dispatched();
}

t.test("every generating sequence queued: the batch goes on the next turn", async (t) => {
  const s = scripted(60_000, { generating: 3, queued: 3 });
  t.equal(s.dispatched(), 0, "not synchronously: others may queue in this turn");
  t.equal(await dispatchedSoon(s), 1);
});

t.test("a straggler is waited for, and the batch goes when it queues", async (t) => {
  const s = scripted(60_000, { generating: 4, queued: 3 });
  await sleep(20);
  t.equal(s.dispatched(), 0, "still waiting for the fourth");
  s.state.queued = 4;
  await sleep(5);
  t.equal(s.dispatched(), 1);
});

t.test("a straggler that does not come is waited for only the limit, from the end of the batch under way", async (t) => {
  const s = scripted(10, { generating: 4, queued: 2, underWay: true });
  await sleep(40);
  t.equal(s.dispatched(), 0, "the clock does not run while the last batch is decoded and sampled");
  s.state.underWay = false;
  const ended = performance.now();
  while (s.dispatched() === 0) await sleep(1);
  t.ok(performance.now() - ended >= 10, "it waited its limit after the batch ended");
});

t.test("a sequence that stopped generating is not waited for", async (t) => {
  const s = scripted(60_000, { generating: 2, queued: 1 });
  await sleep(5);
  t.equal(s.dispatched(), 0);
  s.state.generating = 1;
  await sleep(5);
  t.equal(s.dispatched(), 1);
});

t.test("a queue it cannot see (an unpatched node-llama-cpp): each batch goes at once", async (t) => {
  const s = scripted(60_000, { generating: 4, queued: undefined });
  t.equal(await dispatchedSoon(s), 1);
});

t.test("a decoded batch counts as whole when it holds every generating sequence", async (t) => {
  const s = scripted(2, { generating: 4, queued: 0 });
  s.gather.decoding(4);
  s.gather.decoding(3);
  s.state.generating = 3;
  s.gather.decoding(3);
  t.same(s.gather.stats, { batches: 3, whole: 2 });
});

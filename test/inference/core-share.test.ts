// The core the model's threads leave to the JavaScript thread (src/inference/core-share.ts):
// one thread fewer only where the threads hold every core, that thread has a turn to take in
// or a slot to ready, and the batch is short by what batches of its size took on every thread;
// as asked otherwise.
import t from "tap";
import { CoreShare, SHORT_BATCH_MS } from "../../src/inference/core-share.js";

/** A share whose batches of one token and of 32 took 1 ms and 6 ms. */
function measured(cores: number): CoreShare {
  const share = new CoreShare(cores);
  share.decoded(1, 1);
  share.decoded(32, 6);
  return share;
}

t.test("nothing taken in, no slot readied: the threads asked for", async (t) => {
  const share = measured(2);
  t.equal(share.threadsFor(2, 0, 1), 2);
  t.equal(share.busy, 0);
});

t.test("a turn taken in on two cores with two threads: one, until it is done", async (t) => {
  const share = measured(2);
  const done = share.taking();
  t.equal(share.busy, 1);
  t.equal(share.threadsFor(2, 0, 1), 1);
  t.equal(share.threadsFor(2, 0, 32), 1, "a short prompt's batch too");
  done();
  t.equal(share.threadsFor(2, 0, 1), 2, "as asked once it is stored");
  done();
  t.equal(share.busy, 0, "a second call changes nothing");
});

t.test("several taken in at once: one fewer while any is", async (t) => {
  const share = measured(16);
  const a = share.taking();
  const b = share.taking();
  t.equal(share.threadsFor(16, 0, 4), 15);
  a();
  t.equal(share.threadsFor(16, 0, 4), 15, "the other still is");
  b();
  t.equal(share.threadsFor(16, 0, 4), 16);
});

t.test("a slot being readied counts as a turn taken in", async (t) => {
  const share = measured(4);
  t.equal(share.threadsFor(4, 1, 1), 3);
  t.equal(share.threadsFor(4, 0, 1), 4);
});

t.test("threads asked for above the cores: one fewer too", async (t) => {
  const share = measured(2);
  const done = share.taking();
  t.equal(share.threadsFor(4, 0, 1), 3);
  done();
});

t.test("threads below the cores leave one already, and one thread is never none", async (t) => {
  const share = measured(8);
  const done = share.taking();
  t.equal(share.threadsFor(4, 0, 1), 4, "four of eight cores: as asked");
  const one = new CoreShare(1);
  one.decoded(1, 1);
  t.equal(one.threadsFor(1, 1, 1), 1, "one core, one thread: as asked");
  t.equal(share.threadsFor(1, 1, 1), 1);
  done();
});

t.test("a long batch keeps every thread: a model's long steps, a long prompt, or nothing measured yet", async (t) => {
  const slow = new CoreShare(2);
  for (let i = 0; i < 3; i++) slow.decoded(4, 30);
  const done = slow.taking();
  t.equal(slow.threadsFor(2, 0, 4), 2, "steps of 30 ms: every thread");
  t.equal(slow.threadsFor(2, 0, 1), 2, "nothing smaller measured: taken as long");
  done();
  const share = measured(2);
  const taking = share.taking();
  t.equal(share.threadsFor(2, 0, 512), 2, "512 tokens at what 32 cost each: 96 ms, long");
  t.equal(share.threadsFor(2, 0, 48), 1, "48 at the same: 9 ms, short");
  t.equal(share.expectedMs(48), 9);
  t.equal(share.threadsFor(2, 0, 64), 2, "64: 12 ms, over the limit");
  t.ok(SHORT_BATCH_MS >= 9 && SHORT_BATCH_MS < 12, "the limit the cases above sit around");
  taking();
  t.equal(new CoreShare(2).expectedMs(1), undefined, "nothing measured: no estimate");
});

t.test(
  "the estimate is the least of the last few batches of a size: a batch slowed beside the JavaScript thread, or long ago, does not hold it",
  async (t) => {
    const share = new CoreShare(2);
    share.decoded(1, 2);
    share.decoded(1, 20);
    t.equal(share.expectedMs(1), 2, "the slowed one is not the estimate");
    for (let i = 0; i < 8; i++) share.decoded(1, 15);
    t.equal(share.expectedMs(1), 15, "the model got slower (a longer context): the last eight say so");
    const done = share.taking();
    t.equal(share.threadsFor(2, 0, 1), 2);
    done();
    share.decoded(0, 5);
    share.decoded(2, Number.NaN);
    t.equal(share.expectedMs(2), 30, "an empty or unmeasured batch is not noted: two tokens at one's cost each");
  },
);

t.test("a limit of its own (tests): short is what the share is told", async (t) => {
  const share = new CoreShare(2, 100);
  share.decoded(4, 30);
  const done = share.taking();
  t.equal(share.threadsFor(2, 0, 4), 1);
  done();
});

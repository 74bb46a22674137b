// The core the model's threads leave to the JavaScript thread (src/inference/core-share.ts):
// one thread fewer only where the threads hold every core and that thread has a turn to take in
// or a slot to ready; as asked otherwise.
import t from "tap";
import { CoreShare } from "../../src/inference/core-share.js";

t.test("nothing taken in, no slot readied: the threads asked for", async (t) => {
  const share = new CoreShare(2);
  t.equal(share.threadsFor(2, 0), 2);
  t.equal(share.busy, 0);
});

t.test("a turn taken in on two cores with two threads: one, until it is done", async (t) => {
  const share = new CoreShare(2);
  const done = share.taking();
  t.equal(share.busy, 1);
  t.equal(share.threadsFor(2, 0), 1);
  done();
  t.equal(share.threadsFor(2, 0), 2, "as asked once it is stored");
  done();
  t.equal(share.busy, 0, "a second call changes nothing");
});

t.test("several taken in at once: one fewer while any is", async (t) => {
  const share = new CoreShare(16);
  const a = share.taking();
  const b = share.taking();
  t.equal(share.threadsFor(16, 0), 15);
  a();
  t.equal(share.threadsFor(16, 0), 15, "the other still is");
  b();
  t.equal(share.threadsFor(16, 0), 16);
});

t.test("a slot being readied counts as a turn taken in", async (t) => {
  const share = new CoreShare(4);
  t.equal(share.threadsFor(4, 1), 3);
  t.equal(share.threadsFor(4, 0), 4);
});

t.test("threads asked for above the cores: one fewer too", async (t) => {
  const share = new CoreShare(2);
  const done = share.taking();
  t.equal(share.threadsFor(4, 0), 3);
  done();
});

t.test("threads below the cores leave one already, and one thread is never none", async (t) => {
  const share = new CoreShare(8);
  const done = share.taking();
  t.equal(share.threadsFor(4, 0), 4, "four of eight cores: as asked");
  t.equal(new CoreShare(1).threadsFor(1, 1), 1, "one core, one thread: as asked");
  t.equal(share.threadsFor(1, 1), 1);
  done();
});

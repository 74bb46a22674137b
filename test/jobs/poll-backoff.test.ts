import t from "tap";
import { Doorbell } from "../../src/jobs/doorbell.js";
import { PollBackoff } from "../../src/jobs/poll-backoff.js";

t.test("where every signal arrives, each empty poll doubles the wait up to the cap; finding something resets it", async (t) => {
  const b = new PollBackoff({ pollMs: 250, complete: () => true });
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    waits.push(b.ms);
    b.idle();
  }
  t.same(waits, [250, 500, 1000, 2000, 2000, 2000]);
  b.reset();
  t.equal(b.ms, 250);
});

t.test("where only polling sees other processes' work, the wait stays pollMs", async (t) => {
  let complete = false;
  const b = new PollBackoff({ pollMs: 100, complete: () => complete, max: 4 });
  for (let i = 0; i < 5; i++) b.idle();
  t.equal(b.ms, 100, "signals incomplete: no backoff");
  complete = true;
  t.equal(b.ms, 400, "the cap, once signals reach the process again");
});

t.test("waiting on a doorbell: running out lengthens the next wait, a ring ends it and leaves the next as it is", async (t) => {
  const b = new PollBackoff({ pollMs: 5, complete: () => true });
  const bell = new Doorbell();
  await b.wait(bell);
  await b.wait(bell);
  t.equal(b.ms, 20, "two waits ran out");
  const long = new PollBackoff({ pollMs: 60_000, complete: () => true });
  const waiting = long.wait(bell);
  bell.ring();
  await waiting;
  t.pass("a ring ends a long wait at once");
  bell.ring();
  await b.wait(bell);
  t.equal(b.ms, 20, "a ring is answered by the poll it wakes: no faster polling after it");
});

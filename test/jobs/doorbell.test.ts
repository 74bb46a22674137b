import t from "tap";
import { Doorbell } from "../../src/jobs/doorbell.js";

t.test("a ring before the wait is not lost", async (t) => {
  const bell = new Doorbell();
  bell.ring();
  const started = Date.now();
  t.equal(await bell.wait(5_000), true);
  t.ok(Date.now() - started < 1_000, "returned at once");
});

t.test("a ring during the wait ends it; without one it times out", async (t) => {
  const bell = new Doorbell();
  let rung = false;
  setTimeout(() => {
    rung = true;
    bell.ring();
  }, 20);
  t.equal(await bell.wait(5_000), true, "says it was rung");
  t.ok(rung);
  const started = Date.now();
  t.equal(await bell.wait(50), false, "says it ran out");
  t.ok(Date.now() - started >= 40, "waited for the timeout when nobody rang");
});

t.test("an abort ends the wait", async (t) => {
  const bell = new Doorbell();
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 20);
  const started = Date.now();
  t.equal(await bell.wait(5_000, ac.signal), false, "an abort is not a ring");
  t.ok(Date.now() - started < 1_000);
});

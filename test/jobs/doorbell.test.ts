import t from "tap";
import { Doorbell } from "../../src/jobs/doorbell.js";

t.test("a ring before the wait is not lost", async (t) => {
  const bell = new Doorbell();
  bell.ring();
  const started = Date.now();
  await bell.wait(5_000);
  t.ok(Date.now() - started < 1_000, "returned at once");
});

t.test("a ring during the wait ends it; without one it times out", async (t) => {
  const bell = new Doorbell();
  let rung = false;
  setTimeout(() => {
    rung = true;
    bell.ring();
  }, 20);
  await bell.wait(5_000);
  t.ok(rung);
  const started = Date.now();
  await bell.wait(50);
  t.ok(Date.now() - started >= 40, "waited for the timeout when nobody rang");
});

t.test("an abort ends the wait", async (t) => {
  const bell = new Doorbell();
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 20);
  const started = Date.now();
  await bell.wait(5_000, ac.signal);
  t.ok(Date.now() - started < 1_000);
});

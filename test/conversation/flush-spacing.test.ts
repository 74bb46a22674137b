// A worker's event writes per second stay about the same however many streams it runs: each
// stream's writes are spaced by the base times the streams, within [base, 200 ms].
import t from "tap";
import { flushSpacing } from "../../src/conversation/run-turn.js";

t.test("spacing grows with the streams, between the base and 200 ms", async (t) => {
  t.equal(flushSpacing(25, 1), 25, "one stream: the base");
  t.equal(flushSpacing(25, 0), 25, "never below the base");
  t.equal(flushSpacing(25, 4), 100, "four streams: four times as far apart");
  t.equal(flushSpacing(25, 40), 200, "at most 200 ms");
  t.equal(flushSpacing(500, 4), 500, "a base above the cap is kept");
});

// When a kept prompt is loaded rather than read: from the engine's own measures of reading a
// token and loading (or, before the first load, writing) a byte of state.
import t from "tap";
import { LOAD_PAYBACK, MIN_READ_TOKENS, StateCosts } from "../../src/inference/state-costs.js";
import { LOAD_MIN_GAIN } from "../../src/inference/slots.js";

t.test("until reading and a write or load are measured, the fixed minimum", async (t) => {
  const costs = new StateCosts();
  t.equal(costs.minLoadGain(1_000_000), LOAD_MIN_GAIN);
  costs.noteRead(20, 180);
  t.equal(costs.minLoadGain(1_000_000), LOAD_MIN_GAIN, "a read alone says nothing of loading");
  const other = new StateCosts();
  other.noteSave(1_000_000, 2);
  t.equal(other.minLoadGain(1_000_000), LOAD_MIN_GAIN, "a write alone says nothing of reading");
  t.same(other.measured, { saveMsPerByte: 2e-6 });
});

t.test("on a CPU, where a token reads in milliseconds, a load pays for a token or two", async (t) => {
  const costs = new StateCosts();
  // As measured on two cores with the bench model: 18 tokens in 180 ms, 1.16 MB written in 2.1 ms.
  costs.noteRead(18, 180);
  costs.noteSave(1_157_184, 2.1);
  t.equal(costs.minLoadGain(1_157_184), 1);
  // A load measured since counts instead of the write: 0.7 ms.
  costs.noteLoad(1_157_184, 0.7);
  t.equal(costs.minLoadGain(1_157_184), 1);
  t.equal(costs.minLoadGain(100 * 1_157_184), Math.ceil((LOAD_PAYBACK * 70) / 10), "a state a hundred times larger: 14 tokens");
});

t.test("on a GPU, where reading is quick, a load must gain many tokens", async (t) => {
  const costs = new StateCosts();
  costs.noteRead(400, 20); // 0.05 ms a token
  costs.noteLoad(20_000_000, 10); // 20 MB in 10 ms
  t.equal(costs.minLoadGain(20_000_000), Math.ceil((LOAD_PAYBACK * 10) / 0.05));
});

t.test("short reads are not measures of reading, and one odd measure does not move the median", async (t) => {
  const costs = new StateCosts();
  costs.noteRead(MIN_READ_TOKENS - 1, 100);
  t.same(costs.measured, {}, "a step's fixed costs, not reading");
  for (let i = 0; i < 5; i++) costs.noteRead(10, 100);
  costs.noteRead(10, 10_000);
  t.equal(costs.measured.readMsPerToken, 10);
  // Only the latest nine count: the machine's state changes.
  for (let i = 0; i < 9; i++) costs.noteRead(10, 20);
  t.equal(costs.measured.readMsPerToken, 2);
  costs.noteLoad(0, 5);
  costs.noteSave(100, -1);
  t.equal(costs.measured.loadMsPerByte, undefined, "nothing loaded, or a clock that went back, is no measure");
  t.equal(costs.measured.saveMsPerByte, undefined);
});

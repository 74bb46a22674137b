// Slot choice (src/inference/slots.ts, made by inference/scheduler.ts): the longest shared prefix
// wins unless taking it throws away more than it saves; waiting prompts are served first come,
// first served.
import t from "tap";
import {
  busyRuns,
  KEEP_BUSY_MIN_TOKENS,
  KEEP_MIN_TOKENS,
  KEPT_TOKEN_COST,
  keptSlotScore,
  LOAD_MIN_GAIN,
  loadsKept,
  sharedPrefix,
  slotScore,
  worthKeeping,
} from "../../src/inference/slots.js";
import { standaloneScheduler } from "../../src/inference/scheduler.js";
import { slotPool } from "../helpers/slot-pool.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

t.test("the score: tokens saved, less half of those discarded", async (t) => {
  t.equal(sharedPrefix([1, 2, 3], [1, 2, 4, 5]), 2);
  t.equal(sharedPrefix([], [1]), 0);
  t.equal(slotScore([], [1, 2]), 0, "an empty slot");
  t.equal(slotScore([1, 2, 3], [1, 2, 3, 4]), 3, "a conversation's next turn keeps all of it");
  t.equal(slotScore([1, 2, 9, 9, 9, 9], [1, 2, 3]), 0, "two saved, four discarded");
});

t.test("a conversation's next turn goes to the slot holding its history", async (t) => {
  const held = [[], range(0, 100), range(1000, 50)];
  const pool = slotPool(held);
  const slot = await pool.acquire([...range(1000, 50), 7, 8]);
  t.equal(slot.index, 2);
  t.equal(pool.busy, 1);
});

t.test("a small side request does not evict an agent session's long prefix", async (t) => {
  // Both start with the chat template's opening (token 1); nothing else is shared.
  const session = [1, ...range(5000, 20_000)];
  const pool = slotPool([session, []]);
  const side = await pool.acquire([1, 2, 3, 4]);
  t.equal(side.index, 1, "the empty slot, though the session's shares a token");
  await pool.release(side);
  const next = await pool.acquire([...session, 9, 9]);
  t.equal(next.index, 0, "the session's next request finds its prefix");
});

t.test("a new conversation takes a short chat's slot for the persona it shares", async (t) => {
  const persona = range(0, 300);
  const pool = slotPool([[], [...persona, ...range(900, 60)]]);
  t.equal((await pool.acquire([...persona, 42, 43])).index, 1);
});

t.test("all slots busy: prompts wait, and are served in order of arrival", async (t) => {
  const pool = slotPool([[], []]);
  const a = await pool.acquire([1]);
  const b = await pool.acquire([2]);
  const order: string[] = [];
  const c = pool.acquire([3]).then((s) => (order.push("c"), s));
  const d = pool.acquire([4]).then((s) => (order.push("d"), s));
  await new Promise((r) => setImmediate(r));
  t.same(order, [], "none free: both wait");
  await pool.release(b);
  t.equal((await c).index, b.index);
  await pool.release(a);
  t.equal((await d).index, a.index);
  t.same(order, ["c", "d"]);
});

t.test("a wait ends when its signal aborts: its place goes to the next in line", async (t) => {
  const pool = slotPool([[]]);
  const held = await pool.acquire([1]);
  const cancelled = new AbortController();
  const waiting = pool.acquire([2], cancelled.signal);
  const next = pool.acquire([3]);
  t.equal(pool.waiters, 2);
  cancelled.abort(new Error("the client went away"));
  await t.rejects(waiting, /the client went away/);
  t.equal(pool.waiters, 1, "out of the line");
  await pool.release(held);
  t.equal((await next).index, held.index, "the slot goes to the one still waiting");
  const already = new AbortController();
  already.abort(new Error("gone before it asked"));
  await t.rejects(pool.acquire([4], already.signal), /gone before it asked/, "all busy and already aborted: no wait at all");
  t.equal(pool.waiters, 0);
});

t.test("ties go to the slot unused longest", async (t) => {
  const pool = slotPool([[], [], []]);
  const s0 = await pool.acquire([1]);
  const s1 = await pool.acquire([1]);
  const s2 = await pool.acquire([1]);
  await pool.release(s1);
  await pool.release(s0);
  await pool.release(s2);
  t.equal((await pool.acquire([5])).index, 1);
});

t.test("a pool needs a slot", async (t) => {
  const none = new (class extends ScriptedEngine {
    override readonly slots = 0;
  })(() => ({}));
  t.throws(() => standaloneScheduler(none), /at least one slot/);
});

t.test("runs of busy slots side by side", async (t) => {
  t.equal(busyRuns([]), 0);
  t.equal(busyRuns([false, false]), 0);
  t.equal(busyRuns([true, true, false, true]), 2);
  t.equal(busyRuns([false, true, true, true]), 1);
});

t.test("a chat goes next to those generating, among slots of about the same worth", async (t) => {
  // Unrelated chats of about the same length in every slot.
  const pool = slotPool([range(100, 40), range(200, 42), range(300, 41), range(400, 40)]);
  const first = await pool.acquire([1, 2]);
  t.equal(first.index, 0, "the least discarded, none generating");
  const second = await pool.acquire([1, 3]);
  t.equal(second.index, 1, "beside slot 0, though slots 2 and 3 discard less");
  const third = await pool.acquire([1, 4]);
  t.equal(third.index, 2, "beside slot 1, though slot 3 discards less");
});

t.test("a conversation's history outweighs a place beside the others", async (t) => {
  const history = range(500, 200);
  const pool = slotPool([[], [], [], history]);
  const other = await pool.acquire([1]);
  t.equal(other.index, 0);
  t.equal((await pool.acquire([...history, 7])).index, 3, "its own slot, not slot 1 beside slot 0");
});

t.test("with kept prompts: a shared prefix beats an empty slot, a long one is still not given up", async (t) => {
  const keeps = () => true;
  const template = range(0, 11);
  // A one-off chat of 92 tokens shares 11 with the next: kept on disk, its slot is worth taking.
  const oneOff = [...template, ...range(100, 81)];
  const next = [...template, ...range(200, 19)];
  t.ok(keptSlotScore(oneOff, next, 0, keeps) > keptSlotScore([], next, 0, keeps));
  t.ok(slotScore(oneOff, next) < slotScore([], next), "without kept prompts, the empty slot");
  const pool = slotPool([[], oneOff], (prompt) => (cached) => keptSlotScore(cached, prompt, 0, keeps));
  t.equal((await pool.acquire(next)).index, 1);
  // An agent session's 20k tokens are not written out for a side request's 11.
  const session = [...template, ...range(5000, 20_000)];
  t.ok(keptSlotScore(session, next, 0, keeps) < 0);
  t.equal(
    keptSlotScore(session, next, 0, () => false),
    11 - (session.length - 11) / 2,
    "what cannot be kept counts half",
  );
});

t.test("with kept prompts: a kept prefix that holds more is loaded, and the slot's whole content is the cost", async (t) => {
  const prompt = range(0, 300);
  const slot = [...range(0, 10), ...range(900, 50)];
  t.equal(
    keptSlotScore(slot, prompt, 290, () => true),
    290 - 60 * KEPT_TOKEN_COST,
  );
  t.equal(
    keptSlotScore(slot, prompt, 12, () => true),
    10 - 50 * KEPT_TOKEN_COST,
    `less than ${LOAD_MIN_GAIN} more: the slot's own`,
  );
  t.ok(loadsKept(18, 10) && !loadsKept(17, 10));
  // Where the engine measured that a load pays for one token (inference/state-costs.ts).
  t.ok(loadsKept(11, 10, 1) && !loadsKept(10, 10, 1));
  t.equal(
    keptSlotScore(slot, prompt, 12, () => true, 1),
    12 - 60 * KEPT_TOKEN_COST,
    "two more, loaded",
  );
  t.equal(
    keptSlotScore(range(0, 20), prompt, 0, () => true),
    20,
    "nothing discarded, nothing kept",
  );
  const asked: number[][] = [];
  keptSlotScore([...range(0, 10), 7, 7], prompt, 0, (discarded, whole) => (asked.push([discarded, whole]), true));
  t.same(asked, [[2, 12]], "asked about the two discarded of twelve");
});

t.test("what is worth writing out: 32 tokens when idle, 1,024 while others generate, and a 32nd of the whole", async (t) => {
  t.notOk(worthKeeping(KEEP_MIN_TOKENS - 1, 100, 0));
  t.ok(worthKeeping(KEEP_MIN_TOKENS, 100, 0));
  t.notOk(worthKeeping(500, 600, 3), "a short chat is not worth a step's wait");
  t.ok(worthKeeping(KEEP_BUSY_MIN_TOKENS, 20_000, 1), "an agent session's prefix is");
  // The write takes the whole state; only the discarded tokens would be read again.
  t.notOk(worthKeeping(60, 20_000, 0), "a few dozen of a 20k-token session are not worth writing its 20k");
  t.notOk(worthKeeping(20_000 * KEPT_TOKEN_COST - 1, 20_000, 0));
  t.ok(worthKeeping(20_000 * KEPT_TOKEN_COST, 20_000, 0));
  t.ok(worthKeeping(20_000, 20_000, 0), "all of it, when another chat takes the slot whole");
});

// Background work yields to chats: it goes on at once when no chat is under way, waits while
// one is (looking again at each ring), waits for a quiet after the last chat, and never past
// its deadline.
import t from "tap";
import { Doorbell } from "../../src/jobs/doorbell.js";
import { yieldToChats } from "../../src/jobs/yield-to-chats.js";

const never = new AbortController().signal;

t.test("no chat under way: goes on at once, having asked once", async (t) => {
  let asked = 0;
  const busy = async () => (asked++, false);
  t.equal(await yieldToChats({ busy, doorbell: new Doorbell(), pollMs: 60_000 }, { since: new Date(), deferMs: 60_000 }, never), false);
  t.equal(asked, 1);
});

t.test("a chat under way: waits until a ring finds none", async (t) => {
  const doorbell = new Doorbell();
  const answers = [true, true, false];
  const busy = async () => answers.shift() ?? false;
  // A poll far longer than the test: only the rings move it on.
  const waiting = yieldToChats({ busy, doorbell, pollMs: 600_000 }, { since: new Date(), deferMs: 600_000 }, never);
  let done = false;
  void waiting.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  t.notOk(done, "still waiting while a chat is under way");
  doorbell.ring();
  await new Promise((r) => setTimeout(r, 10));
  t.notOk(done, "the second look still finds a chat");
  doorbell.ring();
  t.equal(await waiting, true, "it waited, then went on when no chat was left");
  t.same(answers, [], "it looked once per ring and once at first");
});

t.test("never past the deadline, however busy", async (t) => {
  let asked = 0;
  const busy = async () => (asked++, true);
  const queuedLongAgo = new Date(Date.now() - 10_000);
  t.equal(await yieldToChats({ busy, doorbell: new Doorbell(), pollMs: 600_000 }, { since: queuedLongAgo, deferMs: 5_000 }, never), false);
  t.equal(asked, 0, "a job already past its deadline does not even ask");
  const waited = await yieldToChats({ busy, doorbell: new Doorbell(), pollMs: 600_000 }, { since: new Date(), deferMs: 50 }, never);
  t.equal(waited, true, "a busy server is waited for, up to the deadline");
  t.equal(
    await yieldToChats({ busy, doorbell: new Doorbell(), pollMs: 600_000 }, { since: new Date(), deferMs: 0 }, never),
    false,
    "0: never waits",
  );
});

t.test("stopping ends the wait", async (t) => {
  const stop = new AbortController();
  const waiting = yieldToChats(
    { busy: async () => true, doorbell: new Doorbell(), pollMs: 600_000 },
    { since: new Date(), deferMs: 600_000 },
    stop.signal,
  );
  stop.abort();
  t.equal(await waiting, true);
});

t.test("a chat that has just ended: the quiet is waited out before asking", async (t) => {
  let asked = 0;
  const busy = async () => (asked++, false);
  const deps = { busy, doorbell: new Doorbell(), pollMs: 600_000, quietMs: 600_000 };
  t.equal(
    await yieldToChats(deps, { since: new Date(), deferMs: 50, lastChatEnded: new Date() }, never),
    true,
    "it waited, to the deadline",
  );
  t.equal(asked, 0, "no question while the quiet lasts");
  const longAgo = new Date(Date.now() - 3_600_000);
  t.equal(await yieldToChats(deps, { since: new Date(), deferMs: 600_000, lastChatEnded: longAgo }, never), false, "a quiet already over");
  t.equal(asked, 1, "asked once, and went on");
});

t.test("a chat seen under way: when it ends, the quiet starts again", async (t) => {
  const doorbell = new Doorbell();
  const answers = [true, false];
  const busy = async () => answers.shift() ?? false;
  const stop = new AbortController();
  const waiting = yieldToChats({ busy, doorbell, pollMs: 600_000, quietMs: 600_000 }, { since: new Date(), deferMs: 600_000 }, stop.signal);
  let done = false;
  void waiting.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  doorbell.ring(); // the chat ends
  await new Promise((r) => setTimeout(r, 10));
  t.notOk(done, "it waits for the quiet after the chat's end");
  t.same(answers, [false], "without asking again while the quiet lasts");
  stop.abort();
  t.equal(await waiting, true);
});

t.test("a burst of chats: one question per quiet, not one per turn's end", async (t) => {
  const doorbell = new Doorbell();
  let asked = 0;
  let chats = 3;
  const busy = async () => (asked++, chats > 0);
  const waiting = yieldToChats({ busy, doorbell, pollMs: 600_000, quietMs: 40 }, { since: new Date(), deferMs: 600_000 }, never);
  let done = false;
  void waiting.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  t.equal(asked, 1, "asked once at first, and a chat was under way");
  // Turns ending faster than the quiet: each ring starts the quiet again, and nothing is asked.
  for (let i = 0; i < 10; i++) {
    doorbell.ring();
    await new Promise((r) => setTimeout(r, 5));
  }
  t.equal(asked, 1, "ten turns' ends, no question");
  t.notOk(done);
  chats = 0;
  t.equal(await waiting, true, "went on once a quiet had passed with no chat under way");
  t.equal(asked, 2, "asked once more, after the quiet");
});

t.test("without a quiet, a chat's end is enough", async (t) => {
  const doorbell = new Doorbell();
  const answers = [true, false];
  const busy = async () => answers.shift() ?? false;
  const waiting = yieldToChats(
    { busy, doorbell, pollMs: 600_000, quietMs: 0 },
    { since: new Date(), deferMs: 600_000, lastChatEnded: new Date() },
    never,
  );
  await new Promise((r) => setImmediate(r));
  doorbell.ring();
  t.equal(await waiting, true, "went on after the chat ended");
});

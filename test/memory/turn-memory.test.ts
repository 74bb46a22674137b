// What a finished turn leaves in memory (memory/turn-memory.ts): the exchange for a chat, what
// was found for an exploration (at most one per window), nothing for a failed or empty turn,
// and never what a coding agent wrapped around the user's words.
import t from "tap";
import { turnMemory, userWords } from "../../src/memory/turn-memory.js";

const done = { status: "done" as const, purpose: "chat" as const };

t.test("a chat is kept as the exchange", async (t) => {
  t.same(turnMemory({ ...done, user: "I keep bees", reply: "How many hives?" }, false), {
    content: "User: I keep bees\nPsyche: How many hives?",
    tags: [],
  });
  t.same(turnMemory({ ...done, user: null, reply: "Hello" }, false), { content: "Psyche: Hello", tags: [] });
});

t.test("a failed, empty or tool-call-only turn adds nothing", async (t) => {
  t.equal(turnMemory({ ...done, status: "failed", user: "hi", reply: "partial" }, false), null);
  t.equal(turnMemory({ ...done, user: "hi", reply: "   " }, false), null);
  t.equal(turnMemory({ ...done, user: "hi", reply: null }, false), null);
});

t.test("an exploration keeps what it found, once per window", async (t) => {
  const exploring = { ...done, purpose: "exploration" as const, user: "(explore the workspace)", reply: " src/ holds a parser " };
  t.same(turnMemory(exploring, false), {
    content: "Exploring on its own while the user was away, Psyche found: src/ holds a parser",
    tags: ["exploration"],
  });
  t.equal(turnMemory(exploring, true), null, "one already kept in the window");
});

t.test("what a coding agent adds to the user's message is not kept", async (t) => {
  const user =
    "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\nlots of it\n</system-reminder>\nFix the failing test in parser.ts<system-reminder>Today's date is 2026-11-24.</system-reminder>";
  t.equal(userWords(user), "Fix the failing test in parser.ts");
  t.same(turnMemory({ ...done, user, reply: "Done." }, false), {
    content: "User: Fix the failing test in parser.ts\nPsyche: Done.",
    tags: [],
  });
  t.same(
    turnMemory({ ...done, user: "<system-reminder>only context</system-reminder>", reply: "Ok." }, false),
    { content: "Psyche: Ok.", tags: [] },
    "nothing of the user's own: the reply alone",
  );
  t.equal(userWords("a <b>tag</b> of the user's own stays"), "a <b>tag</b> of the user's own stays");
});

// What a chat's prompt is offered of memory (memory/recall.ts, ranking.ts bearsOn): the
// memories that bear on the message, not always the budget's worth. A memory that shares only
// a common word with the message (here "today", in nearly every memory) is left out, and a
// message about something never remembered gets no memories at all. Coverage (the share of the
// message's weight among the words a memory matches) comes from the full-text index's own
// statistics (db/sql/memory-terms.ts). A scripted engine shows the prompt the worker builds;
// the database, the index and the worker are real.
import t from "tap";
import { createLogger } from "../../src/log.js";
import { MemoryRecall } from "../../src/memory/recall.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";
import { inProcessPsyche } from "../helpers/in-process.js";

const REMEMBERED = "Things you remember that may bear on this";
const engine = new ScriptedEngine(() => ({ text: "Noted." }));
const psyche = await inProcessPsyche(t, {}, { engine });
const { memory, mood } = psyche.mem;
const days = ["baked bread", "the cat slept in the sun", "rain on the window", "a long walk by the river", "the kettle broke"];
for (const d of days) await memory.remember({ kind: "episodic", content: `Today ${d}`, sourceKind: "api" });
await memory.remember({ kind: "episodic", content: "The axolotl in the tank regrew a leg", sourceKind: "api" });

const recall = (floor?: { share: number; coverage: number }) =>
  new MemoryRecall({ memory, mood, log: createLogger("silent"), budgetTokens: 400, countTokens: (s) => Math.ceil(s.length / 4), floor });
const floor = { share: psyche.config.recallMinShare, coverage: psyche.config.recallMinCoverage };

t.test("coverage: the share of the message's weight a memory matches", async (t) => {
  const [hit] = await memory.search("axolotl tank", 3);
  t.match(hit?.memory.content, /axolotl/);
  t.ok(Math.abs(hit!.memory.text_coverage - 1) < 1e-9, "every word of the message matched");
  const partial = await memory.search("axolotl today", 10);
  const axolotl = partial.find((r) => r.memory.content.includes("axolotl"))!;
  const today = partial.find((r) => r.memory.content.startsWith("Today"))!;
  t.ok(axolotl.memory.text_coverage > 0.8, "the rare word is most of the message's weight");
  t.ok(today.memory.text_coverage < floor.coverage, "a word in nearly every memory is little of it");
  const unseen = await memory.search("platypus today", 10);
  t.ok(
    unseen.every((r) => r.memory.text_coverage < floor.coverage),
    "a word no memory holds weighs as the rarest",
  );
});

t.test("recall into a prompt: what bears on the message, or nothing", async (t) => {
  const context = await recall(floor).contextFor("Tell me about the axolotl today");
  t.match(context, /regrew a leg/);
  t.notMatch(context, /Today /, "memories that share only 'today' are left out");
  const nothing = await recall(floor).contextFor("What did the platypus do today?");
  t.notMatch(nothing, REMEMBERED, "nothing remembered bears on it");
  t.match(nothing, /^Your current mood: /, "the mood still comes");
  const unfloored = await recall().contextFor("What did the platypus do today?");
  t.match(unfloored, /Today /, "without the floor the common word fills the prompt");
});

t.test("a chat's prompt carries the floor's choice (the server's defaults)", async (t) => {
  const ask = async (content: string) => {
    const res = await psyche.request(`/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content }] }),
    });
    t.equal(res.status, 200);
    await res.json();
    const request = engine.requests.at(-1)!;
    return request.messages
      .filter((m) => m.role === "system")
      .map((m) => m.content)
      .join("\n");
  };
  const about = await ask("Tell me about the axolotl today");
  t.match(about, /regrew a leg/);
  t.notMatch(about, /Today baked bread/);
  t.notMatch(await ask("What did the platypus do today?"), REMEMBERED);
});

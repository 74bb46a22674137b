// A chat's prompt holds its conversation's transcript (conversation/run-turn.ts, buildPrompt),
// so recall looks past that conversation's own memories (memory/recall.ts): recalled, they
// would say the same turns twice and take the places of what the transcript does not hold.
// Another conversation's memory of the same thing still comes. A scripted engine shows the
// prompt the worker builds; the database, the memory worker and HTTP are real.
import t from "tap";
import { ScriptedEngine } from "../helpers/scripted-engine.js";
import { inProcessPsyche } from "../helpers/in-process.js";
import { until } from "../helpers/until.js";
import { TEXT_CANDIDATES } from "../../src/memory/memory.js";

const engine = new ScriptedEngine(() => ({ text: "Noted." }));
const psyche = await inProcessPsyche(t, {}, { engine });
const { memory } = psyche.mem;

t.test("search: a conversation left out is not found and lifts nothing", async (t) => {
  for (const content of ["The greenhouse tomatoes need water daily", "The greenhouse door sticks in the rain", "The greenhouse roof leaks"])
    await memory.remember({ kind: "episodic", content, sourceKind: "api", conversationId: "garden-a" });
  await memory.remember({
    kind: "episodic",
    content: "A greenhouse in the allotment grows chillies",
    sourceKind: "api",
    conversationId: "garden-b",
  });
  const all = await memory.search("greenhouse", 10);
  t.equal(all.filter((r) => r.memory.conversation_id === "garden-a").length, 3, "without it, its three memories lead");
  const past = await memory.search("greenhouse", 10, undefined, { exceptConversation: "garden-a" });
  t.same(
    past.map((r) => r.memory.content),
    ["A greenhouse in the allotment grows chillies"],
    "left out, only the other conversation's memory is found",
  );
  t.equal(past[0]!.relevance, 1, "and it is the best there is, not ranked below a lift it no longer has");
});

t.test("a long conversation left out does not use up the candidates", async (t) => {
  // More of its own matches than the full-text and vector candidates a search takes
  // (memory.ts, TEXT_CANDIDATES): left out after they were chosen, nothing else would be found.
  for (let i = 0; i < TEXT_CANDIDATES + 20; i++)
    await memory.remember({
      kind: "episodic",
      content: `Lantern ${i}: the lantern, the lantern again`,
      sourceKind: "api",
      conversationId: "lanterns",
    });
  await memory.remember({
    kind: "episodic",
    content: "The festival floats a paper lantern down the river",
    sourceKind: "api",
    conversationId: "festival",
  });
  const past = await memory.search("lantern", 5, undefined, { exceptConversation: "lanterns" });
  t.same(
    past.map((r) => r.memory.content),
    ["The festival floats a paper lantern down the river"],
    "the other conversation's memory is found",
  );
});

t.test("a chat's prompt recalls other conversations, not its own transcript again", async (t) => {
  const ask = async (content: string, conversation?: string) => {
    const res = await psyche.request(`/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(conversation ? { "x-psyche-conversation": conversation } : {}) },
      body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content }] }),
    });
    t.equal(res.status, 200);
    await res.json();
    return engine.requests.at(-1)!.messages;
  };
  // The context recalled for this turn: the system message just before the latest user message
  // (an earlier turn's stays before its own message, conversation/run-turn.ts).
  const context = (messages: readonly { role: string; content: string }[]) => {
    const latest = messages.findLastIndex((m) => m.role === "user");
    return messages[latest - 1]?.role === "system" ? messages[latest - 1]!.content : "";
  };
  await memory.remember({ kind: "episodic", content: "The old lighthouse keeper painted the lamp room green", sourceKind: "api" });
  await ask("My lighthouse lamp is red and it turns every nine seconds", "lighthouse-talk");
  await until("the first turn's memory", async () => {
    const res = await psyche.db.pool.query("select 1 from memories where source_kind = 'turn' and conversation_id = $1", [
      "lighthouse-talk",
    ]);
    return res.rowCount ? true : undefined;
  });

  const again = await ask("What colour is the lighthouse lamp?", "lighthouse-talk");
  t.match(
    again.filter((m) => m.role === "user").map((m) => m.content),
    [/nine seconds/, /What colour/],
    "the transcript holds the first turn",
  );
  t.match(context(again), /painted the lamp room green/, "another memory of it is recalled");
  t.notMatch(context(again), /nine seconds/, "its own turn is not recalled into the same prompt");

  const elsewhere = await ask("What colour is the lighthouse lamp?");
  t.match(context(elsewhere), /nine seconds/, "another conversation recalls it");
});

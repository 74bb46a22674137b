// The retrieval evaluation's own parts (bench/): the BM25 baseline, the dataset's evidence,
// and the recall arithmetic. A wrong baseline or a mislabelled evidence turn would make every
// figure in the retrieval table in docs/benchmarks.md wrong.
import t from "tap";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Bm25Index } from "../../bench/bm25.js";
import { loadPersona } from "../../bench/realmem.js";
import { promptSummary, summarise, type QueryResult } from "../../bench/retrieval.js";
import { benchVectorSides, StoreRandomIndexing } from "../../bench/vector-sides.js";

t.test("BM25: rarer words weigh more, and length does not win", async (t) => {
  const index = new Bm25Index();
  const common = Array.from({ length: 20 }, (_, i) => index.add(`the garden was lovely on day ${i}`));
  const rare = index.add("the garden had a telescope");
  const long = index.add(`telescope ${"filler words about nothing in particular ".repeat(30)}`);
  t.equal(index.search("garden telescope", 1)[0], rare, "the rare word decides, and the long memory does not win by length");
  t.ok(
    index.search("garden", 30).length === 21 && common.every((d) => index.search("garden", 30).includes(d)),
    "any word matches: every garden",
  );
  t.same(index.search("xylophone quokka", 5), [], "no word in common, no match");
  t.ok(index.search("telescope", 2).includes(long));
});

t.test("RealMem: a query's evidence turn is found by its text, and only earlier turns are stored before it", async (t) => {
  const dir = t.testdir();
  const file = join(dir, "Test_Person_dialogues_256k.json");
  writeFileSync(
    file,
    JSON.stringify({
      _metadata: {},
      dialogues: [
        {
          session_uuid: "s1",
          current_time: "2025-01-01",
          dialogue_turns: [
            { speaker: "User", content: "I want to learn the cello", is_query: false },
            { speaker: "Assistant", content: "Start with open strings, ten minutes a day", is_query: false },
          ],
          extracted_memory: [
            {
              content: "Practice plan: open strings",
              source_turn: 2,
              source_content_snapshot: "Start with open strings, ten minutes a day",
            },
          ],
        },
        {
          session_uuid: "s2",
          current_time: "2025-01-08",
          dialogue_turns: [
            { speaker: "User", content: "What was my cello plan?", is_query: true, query_id: "Q-1", category_name: "Dynamic Incremental" },
            {
              speaker: "Assistant",
              content: "Open strings.",
              memory_used: [{ session_uuid: "s1", content: "Practice plan: open strings" }],
            },
          ],
          extracted_memory: [],
        },
      ],
    }),
  );
  const persona = loadPersona(file);
  t.equal(persona.name, "Test_Person");
  t.same(
    persona.steps.map((s) => (s.kind === "turn" ? s.turn.key : `query ${s.query.id}`)),
    ["s1#0", "s1#1", "query Q-1", "s2#0", "s2#1"],
    "the query comes before its own turn is stored",
  );
  const q = persona.steps.find((s) => s.kind === "query");
  t.match(q, { query: { evidenceTurns: ["s1#1"], evidenceSessions: ["s1"], category: "Dynamic Incremental" } });
});

t.test("recall averages over queries, turn level over those with evidence turns", async (t) => {
  const row = (turns: number, sessions: number, found: { t10: number; t5: number; s10: number }): QueryResult => ({
    persona: "p",
    id: "q",
    category: "c",
    evidenceTurns: turns,
    evidenceSessions: sessions,
    psyche: { turns: { 5: found.t5, 10: found.t10 }, sessions: { 5: found.s10, 10: found.s10 } },
    byScore: { turns: { 5: 0, 10: 0 }, sessions: { 5: 0, 10: 0 } },
    bm25: { turns: { 5: 0, 10: 0 }, sessions: { 5: 0, 10: 0 } },
    prompt: { memories: 8, evidenceTurns: found.t10 },
    promptFloored: { memories: 2, evidenceTurns: found.t5 },
    psycheTop: [],
    bm25Top: [],
  });
  const r = summarise(
    [row(2, 1, { t10: 1, t5: 0, s10: 1 }), row(1, 1, { t10: 1, t5: 1, s10: 1 }), row(0, 2, { t10: 0, t5: 0, s10: 1 })],
    "psyche",
  );
  t.equal(r.turn10, 0.75, "(1/2 + 1/1) / 2: the query without evidence turns is left out");
  t.equal(r.turn5, 0.5);
  t.equal(r.session10, (1 + 1 + 0.5) / 3);
  t.equal(summarise([], "bm25").turn10, 0);
  const rows = [row(2, 1, { t10: 1, t5: 0, s10: 1 }), row(1, 1, { t10: 1, t5: 1, s10: 1 }), row(0, 2, { t10: 0, t5: 0, s10: 1 })];
  t.same(promptSummary(rows, "prompt"), { memories: 8, evidenceTurns: 0.75 }, "a prompt's evidence, over queries with evidence turns");
  t.same(promptSummary(rows, "promptFloored"), { memories: 2, evidenceTurns: 0.5 }, "memories per prompt, over every query");
});

t.test("random indexing learned from the store: words said together point the same way", async (t) => {
  const bm25 = new Bm25Index();
  const ri = new StoreRandomIndexing(bm25);
  const store = (text: string, conversation: string) => {
    bm25.add(text);
    return ri.stored(text, conversation);
  };
  for (let i = 0; i < 5; i++) {
    store(`cello strings bow practice ${i}`, `music-${i}`);
    store(`cello teacher lesson ${i}`, `music-${i}`);
    store(`garden tomatoes soil ${i}`, `garden-${i}`);
  }
  const lesson = store("teacher lesson tomorrow", "music-x");
  const garden = store("tomatoes soil tomorrow", "garden-x");
  const q = ri.query("bow strings");
  const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  t.ok(
    dot(q, lesson) > dot(q, garden) + 0.2,
    `a lesson shares no word with "bow strings" but is near it (${dot(q, lesson).toFixed(2)} vs ${dot(q, garden).toFixed(2)})`,
  );
  t.same(ri.query("quokka"), new Array(512).fill(0), "a word never stored has no context yet");
});

t.test("the vector sides are compared on the same queries, BM25 alone among them", async (t) => {
  const dir = t.testdir();
  const turns = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      speaker: i % 2 ? "Assistant" : "User",
      content: `a note about the weather on day ${i}`,
      is_query: false,
    }));
  writeFileSync(
    join(dir, "A_dialogues_256k.json"),
    JSON.stringify({
      _metadata: {},
      dialogues: [
        { session_uuid: "s0", current_time: "2025-01-01", dialogue_turns: turns(12), extracted_memory: [] },
        {
          session_uuid: "s1",
          current_time: "2025-01-02",
          dialogue_turns: [{ speaker: "User", content: "My telescope arrived, an eight inch reflector", is_query: false }],
          extracted_memory: [{ content: "has a telescope", source_content_snapshot: "My telescope arrived, an eight inch reflector" }],
        },
        {
          session_uuid: "s2",
          current_time: "2025-01-03",
          dialogue_turns: [
            { speaker: "User", content: "Which telescope did I get?", is_query: true, query_id: "Q-1", category_name: "c" },
            { speaker: "Assistant", content: "A reflector.", memory_used: [{ session_uuid: "s1", content: "has a telescope" }] },
          ],
          extracted_memory: [],
        },
      ],
    }),
  );
  const r = benchVectorSides(dir);
  t.equal(r.queries, 1);
  t.equal(r.personas, 1);
  const sides = [...new Set(r.rows.map((x) => x.side))];
  t.same(sides.length, 4, "none, the built-in embedder at 256 and 1024, random indexing");
  t.match(
    r.rows.find((x) => x.side === "none" && !x.conversation),
    { weight: 0, turn5: 1, turn10: 1 },
    "BM25 alone finds the telescope turn first",
  );
  t.equal(
    r.rows.filter((x) => x.side !== "none").length,
    3 * 3 * 2,
    "each of the three other sides at three shares, with and without the conversation lift",
  );
});

// Retrieval on the real embedded Postgres: BM25 over every memory, fusion that lets relevance
// lead, conversation context, and hygiene that keeps what differs.
import t from "tap";
import { consolidate } from "../../src/memory/consolidate.js";
import { createLogger } from "../../src/log.js";
import { toVector } from "../../src/db/sql/memories.js";
import { testMemory } from "../helpers/in-process.js";

const psyche = await testMemory(t);
const { memory } = psyche.mem;
const pool = psyche.db.pool;
const remember = (content: string, extra: { conversationId?: string; kind?: "semantic" | "episodic" } = {}) =>
  memory.remember({ kind: extra.kind ?? "episodic", content, sourceKind: "api", importance: 0.4, conversationId: extra.conversationId });
const age = (id: string, interval: string) =>
  pool.query(`update memories set created_at = now() - $2::interval, last_accessed_at = now() - $2::interval where id = $1`, [
    id,
    interval,
  ]);
const df = async (term: string) =>
  (await pool.query<{ df: number }>("select df from memory_term_stats where term = $1", [term])).rows[0]?.df ?? 0;

t.test("a rare word in one old memory beats a common word in hundreds of newer ones", async (t) => {
  const rare = await remember("Maya keeps the brass telescope in the attic");
  await age(rare.memory.id, "30 days");
  const places = ["harbour", "market", "library", "bakery", "museum", "station", "garden", "school", "office", "beach"];
  for (let i = 0; i < 240; i++) {
    await remember(`Maya walked to the ${places[i % places.length]} on day ${i} and talked about the weather ${i * 7}`);
  }
  t.ok((await df("maya")) >= 241, "the common word is in every one of them");
  const ranked = await memory.search("Where does Maya keep the telescope?", 5);
  t.equal(ranked[0]?.memory.id, rare.memory.id, "found beyond the newest 200 matches, and first");
});

t.test("recall does not feed on itself: recency counts from when a memory was formed", async (t) => {
  const older = await remember("The Lisbon flat has a yellow door and a lemon tree");
  await age(older.memory.id, "2 days");
  const newer = await remember("The Porto flat has a yellow door and a fig tree");
  const first = await memory.search("flat with a yellow door", 2);
  t.same(first.map((r) => r.memory.id).sort(), [older.memory.id, newer.memory.id].sort());
  t.equal(first[0]?.memory.id, newer.memory.id, "equally relevant: the newer first");
  for (let i = 0; i < 5; i++) await memory.search("lemon tree in Lisbon", 1);
  t.equal((await memory.get(older.memory.id))?.access_count, 6, "the older one was recalled again and again");
  const again = await memory.search("flat with a yellow door", 2);
  t.equal(again[0]?.memory.id, newer.memory.id, "and that did not make it win");
});

t.test("a memory formed in the past keeps its time, and a search as of a moment counts recency to it", async (t) => {
  const formedAt = new Date("2025-03-01T10:00:00Z");
  const m = await memory.remember({
    kind: "episodic",
    content: "The Tromso cabin has a red sauna by the fjord",
    sourceKind: "api",
    importance: 0.4,
    formedAt,
  });
  t.equal(m.memory.created_at.toISOString(), formedAt.toISOString(), "formed when it happened, not when stored");
  const week = 168 * 3_600_000;
  const [asOfThen] = await memory.search("red sauna by the fjord", 1, undefined, { asOf: new Date(formedAt.getTime() + week) });
  t.equal(asOfThen?.memory.id, m.memory.id);
  t.equal(asOfThen?.recency.toFixed(3), "0.500", "a week after it was formed: half (the default half-life)");
  const [asOfNow] = await memory.search("red sauna by the fjord", 1);
  t.ok(asOfNow!.recency < 0.05, `as of now, long ago (${asOfNow!.recency})`);
});

t.test("a short turn is found by what its conversation was about", async (t) => {
  const c = `conv-${Date.now()}`;
  await remember("How long should sourdough proof before baking, and does rye flour change it?", { conversationId: c });
  const answer = await remember("Proof it four to six hours at room temperature; rye ferments faster, so check it after three.", {
    conversationId: c,
  });
  const reply = await remember("Great, I'll try the three hour check on Saturday.", { conversationId: c });
  await remember("The bakery on the corner sells rye crackers.", {});
  const ranked = await memory.search("sourdough proofing time", 4);
  const ids = ranked.map((r) => r.memory.id);
  t.ok(ids.includes(reply.memory.id), "the reply says nothing of sourdough, but its neighbour does");
  t.ok(ids.indexOf(answer.memory.id) < ids.indexOf(reply.memory.id), "and the turn that says it ranks above it");
  const row = (await pool.query("select conversation_id from memories where id = $1", [reply.memory.id])).rows[0];
  t.equal(row.conversation_id, c);
});

t.test("hygiene keeps what differs: only memories that say the same thing are folded", async (t) => {
  const long = (colour: string) =>
    `For the kitchen renovation we agreed on oak cabinets, a deep ceramic sink, brass handles, open shelves above the counter, warm lighting under the shelves and ${colour} tiles behind the stove.`;
  const c = `conv-hygiene-${Date.now()}`;
  const blue = await remember(long("blue"), { conversationId: c });
  const green = await remember(long("green"), { conversationId: c });
  t.equal(green.reinforced, false, "one word differs: both kept");
  t.not(green.memory.id, blue.memory.id);
  const elsewhere = await remember(long("blue"), { conversationId: `${c}-other` });
  t.equal(elsewhere.reinforced, false, "the same words in another conversation are another event");
  const twin = await remember(long("BLUE!"), { conversationId: c });
  t.equal(twin.reinforced, true, "the same words in the same conversation are one memory");
  t.equal(twin.memory.id, blue.memory.id);
  const folded = await consolidate({ pool, memory, log: createLogger("silent") }, { similarity: 0.5, everything: true, jobId: null });
  const live = await pool.query("select id from memories where deleted_at is null and id = any($1::uuid[])", [
    [blue.memory.id, green.memory.id, elsewhere.memory.id],
  ]);
  t.equal(live.rowCount, 3, `consolidation folds none of them (${folded.folded} folded elsewhere)`);
});

t.test("the index follows deletes, and memories stored before it join it", async (t) => {
  const m = await remember("Zanzibar spice tour notes: cloves, vanilla, nutmeg");
  const before = await df("zanzibar");
  t.ok(before >= 1);
  await memory.forget(m.memory.id, false);
  t.equal(await df("zanzibar"), before - 1, "a soft delete takes its terms out");
  t.equal(
    (await memory.search("Zanzibar spice tour", 3)).find((r) => r.memory.id === m.memory.id),
    undefined,
  );
  // As an older version of Psyche stored it: a row with no terms.
  const [vector] = await memory.embedder.embed(["Quokka photographs from Rottnest island"]);
  const raw = await pool.query<{ id: string }>(
    "insert into memories (kind, content, importance, embedding, embedder) values ('semantic', $1, 0.5, $2::vector, $3) returning id",
    ["Quokka photographs from Rottnest island", toVector(vector!), memory.embedder.id],
  );
  for (const n of [1, 2]) {
    await pool.query("insert into memories (kind, content, importance, embedding, embedder) values ('semantic', $1, 0.5, $2::vector, $3)", [
      `An imported note number ${n}`,
      toVector(vector!),
      memory.embedder.id,
    ]);
  }
  const [a, b] = await Promise.all([memory.indexPending(), memory.indexPending()]);
  t.equal(a + b, 3, "two indexers at once (a tick and start-up) index each memory once");
  t.equal((await memory.search("quokka photographs", 1))[0]?.memory.id, raw.rows[0]!.id);
  const n = (await pool.query<{ n: number }>("select count(*)::int as n from memories where deleted_at is null")).rows[0]!.n;
  t.equal(await df(""), n, "the index counts every live memory");
});

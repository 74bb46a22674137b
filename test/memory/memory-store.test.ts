// Memory on the real embedded Postgres (pgvector, full text) with real piscina threads.
import t from "tap";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { purgeDeletedMemories, readRecalled } from "../../src/db/sql/memories.js";
import { EmbedderError, ThreadEmbedder } from "../../src/memory/embedder.js";
import { BACKGROUND_HEADER, MemoryRecall } from "../../src/memory/recall.js";
import { ThreadScorer } from "../../src/memory/scorer.js";
import { createLogger } from "../../src/log.js";
import { testMemory } from "../helpers/in-process.js";

const psyche = await testMemory(t);
const { memory, mood } = psyche.mem;
const pool = psyche.db.pool;
const remember = (content: string, extra: { importance?: number } = {}) =>
  memory.remember({ kind: "semantic", content, sourceKind: "api", ...extra });
const rowCount = async () => (await pool.query<{ n: number }>("select count(*)::int as n from memories")).rows[0]!.n;

t.test("a relevant memory from months ago ranks above irrelevant recent ones", async (t) => {
  const old = await remember("My sister Anna lives in Lisbon and teaches piano to children", { importance: 0.4 });
  await pool.query(
    "update memories set created_at = now() - interval '4 months', last_accessed_at = now() - interval '4 months' where id = $1",
    [old.memory.id],
  );
  for (const text of [
    "The build broke because of a missing semicolon",
    "We talked about the weather being cold today",
    "Lunch was pasta with tomato sauce",
    "The cat knocked a glass off the table",
    "A new episode of the podcast came out this morning",
  ]) {
    await remember(text, { importance: 0.4 });
  }
  const ranked = await memory.search("Where does my sister Anna live?", 5);
  t.equal(ranked[0]?.memory.id, old.memory.id, "the old relevant memory comes first");
  t.ok(ranked[0]!.memory.similarity! > 0.2);
  const after = await memory.get(old.memory.id);
  t.equal(after?.access_count, 1, "retrieval counts as an access");
  t.ok(after!.last_accessed_at.getTime() > Date.now() - 60_000, "and moves last_accessed_at");
});

t.test("a search returns each kept memory whole, with its scores, as it was before this recall", async (t) => {
  const long = `The long letter from grandmother Ilse about the orchard: ${"apples, pears and plums in rows by the river; ".repeat(60)}`;
  const m = await remember(long, { importance: 0.5 });
  await remember("A short note about plums");
  const [hit] = await memory.search("grandmother Ilse orchard letter", 1);
  t.equal(hit?.memory.id, m.memory.id);
  t.equal(hit!.memory.content, long, "the whole text, though candidates are ranked without it");
  t.match(hit!.memory, { kind: "semantic", importance: 0.5, access_count: 0, reinforcements: 0, deleted_at: null });
  t.ok(hit!.memory.text_score > 0 && hit!.memory.similarity! > 0, "and its scores");
  t.equal((await memory.get(m.memory.id))?.access_count, 1, "the recall is counted");

  const gone = await remember("A memory deleted between ranking and reading");
  await memory.forget(gone.memory.id, false);
  const rows = await readRecalled(pool, [m.memory.id, gone.memory.id]);
  t.same(
    rows.map((r) => [r.id, r.access_count]),
    [[m.memory.id, 1]],
    "a deleted memory is left out; the row is as before this read",
  );
  t.equal((await memory.get(m.memory.id))?.access_count, 2, "and this read counted too");
  await memory.forget(gone.memory.id, true);
});

t.test("a near-duplicate reinforces the existing memory instead of adding a row", async (t) => {
  const before = await rowCount();
  const first = await remember("Psyche's favourite colour is deep blue", { importance: 0.3 });
  const again = await remember("psyche's favourite colour is DEEP BLUE!", { importance: 0.6 });
  t.equal(first.reinforced, false);
  t.equal(again.reinforced, true);
  t.equal(again.memory.id, first.memory.id);
  t.equal(again.memory.reinforcements, 1);
  t.ok(again.memory.importance >= 0.6, "keeps the higher importance");
  t.equal(await rowCount(), before + 1);
  const different = await remember("Psyche's least favourite colour is orange");
  t.equal(different.reinforced, false, "related but different is a memory of its own");
  // Two stores of one new text at once still make one row.
  const [x, y] = await Promise.all([remember("Concurrent stores are serialised"), remember("Concurrent stores are serialised")]);
  t.equal(x.memory.id, y.memory.id);
  t.equal(await rowCount(), before + 3);
});

t.test("forgetting: soft delete leaves every search at once, purge removes the row", async (t) => {
  const m = await remember("The spare key is under the blue flowerpot");
  t.equal((await memory.search("spare key flowerpot", 3))[0]?.memory.id, m.memory.id);
  t.same(await memory.forget(m.memory.id, false), { deleted: true, purged: false });
  t.equal(await memory.get(m.memory.id), undefined);
  t.notOk((await memory.search("spare key flowerpot", 10)).some((r) => r.memory.id === m.memory.id));
  const stored = await pool.query("select deleted_at from memories where id = $1", [m.memory.id]);
  t.ok(stored.rows[0].deleted_at, "still stored until purged");
  t.same(await memory.forget(m.memory.id, false), { deleted: false, purged: false }, "deleting twice finds nothing");
  t.equal(await purgeDeletedMemories(pool, 3600), 0, "not yet old enough to purge");
  t.equal(await purgeDeletedMemories(pool, 0), 1);
  t.equal((await pool.query("select 1 from memories where id = $1", [m.memory.id])).rowCount, 0);
  const now = await remember("Delete me right away please, no waiting");
  t.same(await memory.forget(now.memory.id, true), { deleted: true, purged: true });
  t.equal((await pool.query("select 1 from memories where id = $1", [now.memory.id])).rowCount, 0);
});

t.test("recall: mood and relevant memories in the prompt, within the token budget", async (t) => {
  const countTokens = (text: string) => Math.ceil(text.length / 4);
  const log = createLogger("silent");
  const recall = new MemoryRecall({ memory, mood, log, budgetTokens: 200, countTokens });
  const context = await recall.contextFor("Tell me about Anna and her piano lessons");
  t.match(context, /^Your current mood: /);
  t.match(context, /Anna lives in Lisbon/);
  t.ok(countTokens(context) <= 200 + 5);
  const tight = new MemoryRecall({ memory, mood, log, budgetTokens: 30, countTokens });
  const small = await tight.contextFor("Tell me about Anna and her piano lessons");
  t.notMatch(small, /Lisbon/, "a memory that does not fit is left out");
  t.match(small, /mood/);
  const off = new MemoryRecall({ memory, mood, log, budgetTokens: 0, countTokens });
  t.equal(await off.contextFor("Anna"), "");
});

t.test("recall: recent significant insights and dreams come only as set-apart background", async (t) => {
  const countTokens = (text: string) => Math.ceil(text.length / 4);
  const recall = new MemoryRecall({ memory, mood, log: createLogger("silent"), budgetTokens: 400, countTokens });
  const dream = await memory.remember({
    kind: "dream",
    content: "A lighthouse sang to the harbour seals all night",
    importance: 0.8,
    sourceKind: "dream",
  });
  // Insights are memories too, recalled when relevant; these three are not relevant to the query.
  await memory.remember({ kind: "insight", content: "Mornings go better after a short walk", importance: 0.6, sourceKind: "dream" });
  await memory.remember({ kind: "insight", content: "Tea tastes sweeter from blue cups", importance: 0.1, sourceKind: "dream" });
  const old = await memory.remember({ kind: "insight", content: "Winters used to feel longer", importance: 0.9, sourceKind: "dream" });
  await pool.query("update memories set created_at = now() - interval '3 days' where id = $1", [old.memory.id]);
  const context = await recall.contextFor("the lighthouse keeper");
  const [before, background = ""] = context.split(BACKGROUND_HEADER);
  t.ok(background, "a background section");
  t.notMatch(before!, /sang to the harbour seals/, "the dream is not among the things remembered");
  t.match(background, /sang to the harbour seals/, "the recent significant dream is background");
  t.match(background, /Mornings go better/, "the recent significant insight is background");
  t.notMatch(context, /blue cups/, "an insignificant insight is not offered");
  t.notMatch(context, /Winters used to/, "an old insight is not offered");
  const none = new MemoryRecall({
    memory,
    mood,
    log: createLogger("silent"),
    budgetTokens: 400,
    countTokens,
    insights: { limit: 0, hours: 24, minImportance: 0.3 },
  });
  t.notMatch(await none.contextFor("the lighthouse keeper"), /sang to the harbour seals/, "without background, no dream at all");
  await memory.forget(dream.memory.id, true);
});

t.test("a thread that throws does not take the process down", async (t) => {
  const scorer = new ThreadScorer(1);
  t.teardown(() => scorer.close());
  await t.rejects(scorer.score({ text: 42 as unknown as string }), /malformed task: .*text/s);
  t.match(await scorer.score({ text: "I am glad" }), { valence: Number, importance: Number });

  const notAModel = join(t.testdir(), "not-a-model.gguf");
  writeFileSync(notAModel, "this is not a GGUF file");
  await t.rejects(ThreadEmbedder.start({ kind: "gguf", path: notAModel, name: "broken" }, 1), EmbedderError);
  // The server's own threads still work.
  t.ok((await memory.search("Anna", 1)).length === 1);
});

t.test("cancelling an embedding rejects at once and leaves the threads usable", async (t) => {
  const controller = new AbortController();
  const texts = Array.from({ length: 2000 }, (_, i) => `text number ${i} about many things`);
  const pending = psyche.mem.embedder.embed(texts, controller.signal);
  controller.abort(new Error("client went away"));
  await t.rejects(pending, /client went away/);
  const [v] = await psyche.mem.embedder.embed(["still works"]);
  t.equal(v?.length, psyche.mem.embedder.dimensions);
});

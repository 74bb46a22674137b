import t from "tap";
import { rankMemories, recency, reciprocalRankFusion, textQuery, type RankSettings } from "../../src/memory/ranking.js";

const settings: RankSettings = { weights: { relevance: 1, recency: 0.3, importance: 0.3 }, recencyHalfLifeHours: 24, rrfK: 60 };
const now = new Date("2026-11-22T12:00:00Z");
const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);

t.test("reciprocal rank fusion and hyperbolic recency", async (t) => {
  t.equal(reciprocalRankFusion([1, 1], 60), 2 / 61);
  t.equal(reciprocalRankFusion([null, 3], 60), 1 / 63);
  t.equal(reciprocalRankFusion([null, null], 60), 0);
  t.equal(recency(now, now, 24), 1);
  t.equal(recency(hoursAgo(24), now, 24), 0.5);
  // Three months on, a hyperbolic curve keeps ~1%; an hourly 0.995 decay keeps 0.002%.
  t.ok(recency(hoursAgo(24 * 90), now, 24) > 0.01);
});

t.test("a relevant memory from months ago outranks irrelevant recent ones", async (t) => {
  const old = { id: "old", vector_rank: 1, text_rank: 1, importance: 0.4, last_accessed_at: hoursAgo(24 * 120) };
  const recent = [2, 3, 4, 5].map((r) => ({ id: `recent${r}`, vector_rank: r, text_rank: null, importance: 0.4, last_accessed_at: hoursAgo(r) }));
  const ranked = rankMemories([...recent, old], settings, now);
  t.equal(ranked[0]?.memory.id, "old");
  t.equal(ranked[0]?.relevance, 1);
  t.equal(ranked[0]?.recency, 0);
});

t.test("between equally relevant memories, recency and importance decide", async (t) => {
  const a = { id: "a", vector_rank: 1, text_rank: 2, importance: 0.5, last_accessed_at: hoursAgo(24 * 30) };
  const b = { id: "b", vector_rank: 2, text_rank: 1, importance: 0.5, last_accessed_at: hoursAgo(1) };
  t.same(rankMemories([a, b], settings, now).map((r) => r.memory.id), ["b", "a"]);
  const c = { ...a, id: "c", last_accessed_at: hoursAgo(1), importance: 0.9 };
  t.same(rankMemories([b, c], settings, now).map((r) => r.memory.id), ["c", "b"]);
  t.same(rankMemories([], settings, now), []);
});

t.test("the text query matches any word", async (t) => {
  t.equal(textQuery("What's my sister's name?"), "what | s | my | sister | name");
  t.equal(textQuery("?!"), null);
});

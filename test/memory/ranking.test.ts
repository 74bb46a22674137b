import t from "tap";
import { loadConfig } from "../../src/config.js";
import { bearsOn, rankMemories, recency, seatConversations, type RankSettings } from "../../src/memory/ranking.js";

const settings: RankSettings = {
  weights: { vector: 0.2, conversation: 0.5, recency: 0.1, importance: 0.1 },
  recencyHalfLifeHours: 24,
  minSimilarity: 0.1,
  conversationSeats: 0.5,
};
const now = new Date("2026-11-22T12:00:00Z");
const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);
const memory = (
  id: string,
  o: Partial<{ text: number; similarity: number | null; importance: number; hours: number; conversation: string | null }> = {},
) => ({
  id,
  text_score: o.text ?? 0,
  similarity: o.similarity ?? null,
  importance: o.importance ?? 0.4,
  created_at: hoursAgo(o.hours ?? 1),
  conversation_id: o.conversation ?? null,
});

t.test("hyperbolic recency", async (t) => {
  t.equal(recency(now, now, 24), 1);
  t.equal(recency(hoursAgo(24), now, 24), 0.5);
  // Three months on, a hyperbolic curve keeps ~1%; an hourly 0.995 decay keeps 0.002%.
  t.ok(recency(hoursAgo(24 * 90), now, 24) > 0.01);
});

t.test("relevance leads: recency and importance never lift an irrelevant memory over a relevant one", async (t) => {
  const old = memory("old", { text: 4, similarity: 0.6, hours: 24 * 120, importance: 0.1 });
  const recent = [1, 2, 3].map((h) => memory(`recent${h}`, { text: 0, similarity: 0.05, hours: h, importance: 1 }));
  const ranked = rankMemories([...recent, old], settings, now);
  t.equal(ranked[0]?.memory.id, "old");
  t.equal(ranked[0]?.relevance, 1);
  t.ok(
    ranked.slice(1).every((r) => r.score === 0),
    "nothing relevant, nothing lifted",
  );
  const slightlyLess = memory("newer", { text: 3.9, similarity: 0.6, hours: 0, importance: 1 });
  t.equal(
    rankMemories([old, slightlyLess], settings, now)[0]?.memory.id,
    "newer",
    "between nearly equal ones, recency and importance decide",
  );
  const clearlyLess = memory("newer", { text: 2, similarity: 0.3, hours: 0, importance: 1 });
  t.equal(rankMemories([old, clearlyLess], settings, now)[0]?.memory.id, "old", "but they cannot overturn a clear difference");
});

t.test("as shipped, recency lets the lately formed win among the about as relevant, never a much less relevant one", async (t) => {
  const config = loadConfig({}, {});
  const shipped: RankSettings = {
    ...settings,
    weights: { ...settings.weights, recency: config.recallWeightRecency, importance: config.recallWeightImportance },
    recencyHalfLifeHours: config.recallHalfLifeHours,
  };
  const old = memory("old", { text: 10, hours: 24 * 120, importance: 0 });
  // Relevance 0.7 and 0.6 of the old one's (text only, no conversation): formed an hour ago, as important as can be.
  const fresh = (text: number) => memory(`fresh${text}`, { text, hours: 1, importance: 1 });
  t.equal(rankMemories([old, fresh(7)], shipped, now)[0]?.memory.id, "fresh7", "seven-tenths as relevant, and formed lately: first");
  t.equal(rankMemories([old, fresh(6)], shipped, now)[0]?.memory.id, "old", "under five-eighths as relevant: never first");
});

t.test("being recalled does not make a memory recent: recency counts from when it was formed", async (t) => {
  const formedLongAgo = { ...memory("a", { text: 2, hours: 24 * 60 }), last_accessed_at: now };
  const formedToday = memory("b", { text: 2, hours: 1 });
  t.same(
    rankMemories([formedLongAgo, formedToday], settings, now).map((r) => r.memory.id),
    ["b", "a"],
  );
});

t.test("a conversation's best match lifts its other memories", async (t) => {
  const best = memory("best", { text: 5, conversation: "c1" });
  const sibling = memory("sibling", { text: 1, conversation: "c1" });
  const stranger = memory("stranger", { text: 2, conversation: "c2" });
  t.same(
    rankMemories([stranger, sibling, best], settings, now).map((r) => r.memory.id),
    ["best", "sibling", "stranger"],
  );
  const off = { ...settings, weights: { ...settings.weights, conversation: 0 } };
  t.same(
    rankMemories([stranger, sibling, best], off, now).map((r) => r.memory.id),
    ["best", "stranger", "sibling"],
    "weight 0: each on its own",
  );
  const alone = memory("alone", { text: 2 });
  t.equal(
    rankMemories([alone, stranger], settings, now)[0]?.relevance,
    1,
    "a memory outside any conversation is lifted by itself, like a conversation of one",
  );
});

t.test("vector similarity is a share of relevance, below the minimum it is none", async (t) => {
  const textOnly = memory("text", { text: 1, similarity: 0.05 });
  const vectorOnly = memory("vector", { text: 0, similarity: 0.9 });
  const ranked = rankMemories([textOnly, vectorOnly], settings, now);
  t.same(
    ranked.map((r) => r.memory.id),
    ["text", "vector"],
    "the text score leads at the default 0.2",
  );
  const vectorLed = { ...settings, weights: { ...settings.weights, vector: 0.9 } };
  t.equal(rankMemories([textOnly, vectorOnly], vectorLed, now)[0]?.memory.id, "vector");
  t.same(rankMemories([], settings, now), []);
});

t.test("strong conversations get a seat in the top k before one conversation's every turn", async (t) => {
  // c1 matches best, three times; c2 a little less, three times; c3 once, nearly as well as c2's
  // best; c4 barely.
  const c1 = [5, 4.8, 4.6].map((text, i) => memory(`c1-${i}`, { text, conversation: "c1" }));
  const c2 = [3, 2.9, 2.5].map((text, i) => memory(`c2-${i}`, { text, conversation: "c2" }));
  const c3 = [memory("c3-0", { text: 2.95, conversation: "c3" })];
  const c4 = [memory("c4-0", { text: 0.2, conversation: "c4" })];
  const ranked = rankMemories([...c4, ...c3, ...c2, ...c1], settings, now);
  t.same(
    ranked.slice(0, 4).map((r) => r.memory.id),
    ["c1-0", "c1-1", "c1-2", "c2-0"],
    "by score alone, c1 fills the top 3",
  );
  const top3 = (share: number) =>
    seatConversations(ranked, 3, share)
      .slice(0, 3)
      .map((r) => r.memory.id);
  t.same(top3(0.7), ["c1-0", "c1-1", "c2-0"], "two of three seats: c2's best takes c1-2's place; the three stay in score order");
  t.same(top3(1), ["c1-0", "c1-1", "c2-0"], "three seats, but only c1 and c2 are strong: c3's one match is less than half of c1's three");
  t.equal(seatConversations(ranked, 10, 0.5).length, ranked.length, "a re-order: nothing is dropped");
  t.same(seatConversations(ranked, 10, 0), ranked, "share 0: by score alone");
  const alone = rankMemories(c1, settings, now);
  t.same(seatConversations(alone, 10, 0.5), alone, "one conversation: nothing to seat");
});

t.test("a prompt gets what bears on the message: half the best's relevance, and a real part of the message", async (t) => {
  const floor = { share: 0.5, coverage: 0.15 };
  const m = (id: string, text: number, coverage: number, similarity: number | null = null) => ({
    ...memory(id, { text, similarity }),
    text_coverage: coverage,
  });
  const ranked = rankMemories(
    [
      m("whole", 6, 0.9, 0.5),
      m("part", 4, 0.5, 0.3),
      // A common word of the message and nothing else: second by score, but little of what was asked.
      m("common-word", 3.5, 0.05, 0.3),
      m("weak", 1, 0.5),
      // Found by meaning alone: no word matched, judged by its share.
      m("meaning", 0, 0, 0.9),
    ],
    { ...settings, weights: { ...settings.weights, vector: 0.5 } },
    now,
  );
  const kept = ranked.filter((r) => bearsOn(r, floor)).map((r) => r.memory.id);
  t.same(kept.sort(), ["meaning", "part", "whole"]);
  t.ok(ranked.find((r) => r.memory.id === "common-word")!.relevance >= 0.5, "left out for its coverage, not its share");
  t.ok(ranked.find((r) => r.memory.id === "weak")!.relevance < 0.5, "left out for its share");
  t.same(ranked.filter((r) => bearsOn(r, { share: 0, coverage: 0 })).length, 5, "a floor of nothing keeps everything");
  // When nothing asked is matched well, nothing is offered, however it ranks among the rest.
  const junk = rankMemories([m("a", 2, 0.05), m("b", 1.9, 0.04)], settings, now);
  t.same(
    junk.filter((r) => bearsOn(r, floor)),
    [],
  );
});

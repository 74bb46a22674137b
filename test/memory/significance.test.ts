import t from "tap";
import { novelty, seedSignificance, significance } from "../../src/memory/significance.js";

const calm = { valence: 0, arousal: 0 };

t.test("the seed formula, part by part", async (t) => {
  t.equal(seedSignificance("ok", calm, 0), 0);
  t.equal(seedSignificance("x".repeat(201), calm, 0), 0.2);
  t.equal(seedSignificance("x".repeat(501), calm, 0), 0.4);
  t.equal(seedSignificance("ok", calm, 2), 0.2);
  t.equal(seedSignificance("I think so", calm, 0), 0.2);
  t.equal(seedSignificance("ok", { valence: 1, arousal: 1 }, 0), 0.2);
  t.equal(seedSignificance("ok", { valence: 0.5, arousal: 0 }, 0), 0.05);
  t.equal(seedSignificance(`${"y".repeat(600)}. I notice`, { valence: -1, arousal: 1 }, 1), 1);
});

t.test("novelty blends in: a repeat matters less than something new", async (t) => {
  t.equal(novelty(null), 1);
  t.equal(novelty(1), 0);
  t.equal(novelty(0.25), 0.75);
  const text = "I think the garden needs water. It has not rained for weeks.";
  const fresh = significance({ text, affect: calm, toolCalls: 0, maxSimilarity: 0.1 });
  const repeat = significance({ text, affect: calm, toolCalls: 0, maxSimilarity: 0.95 });
  t.ok(fresh > repeat);
  t.equal(significance({ text: "ok", affect: calm, toolCalls: 0, maxSimilarity: null }), 0.2);
});

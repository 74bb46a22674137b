import t from "tap";
import { affectOf } from "../../src/mood/affect.js";
import { decayedMood, describeMood, type MoodSettings, reactedMood } from "../../src/mood/mood.js";

const settings: MoodSettings = { baseline: { valence: 0.1, arousal: -0.1 }, halfLifeMinutes: 60, sensitivity: 0.5 };
const at = new Date("2026-11-22T12:00:00Z");
const later = (minutes: number) => new Date(at.getTime() + minutes * 60_000);

t.test("the mood decays toward its baseline with the configured half-life", async (t) => {
  t.same(decayedMood(undefined, at, settings), settings.baseline);
  const state = { valence: 0.9, arousal: 0.7, at };
  t.same(decayedMood(state, at, settings), { valence: 0.9, arousal: 0.7 });
  const hour = decayedMood(state, later(60), settings);
  t.ok(Math.abs(hour.valence - 0.5) < 1e-9, "half the distance to 0.1 after one half-life");
  t.ok(Math.abs(hour.arousal - 0.3) < 1e-9);
  const day = decayedMood(state, later(24 * 60), settings);
  t.ok(Math.abs(day.valence - 0.1) < 1e-6 && Math.abs(day.arousal + 0.1) < 1e-6);
});

t.test("an event moves the decayed mood toward its affect, within [-1, 1]", async (t) => {
  const moved = reactedMood({ valence: 0.1, arousal: -0.1, at }, { valence: -0.9, arousal: 0.9 }, at, settings);
  t.ok(Math.abs(moved.valence + 0.4) < 1e-9 && Math.abs(moved.arousal - 0.4) < 1e-9);
  const full = reactedMood(undefined, { valence: 1, arousal: 1 }, at, { ...settings, sensitivity: 1 });
  t.same(full, { valence: 1, arousal: 1 });
  t.match(describeMood({ valence: 0.6, arousal: -0.5 }), /content and calm/);
});

t.test("affect from the VADER lexicon: valence and arousal", async (t) => {
  const happy = affectOf("I love this, what a wonderful and happy day");
  const sad = affectOf("This is terrible. I feel miserable and hopeless.");
  const plain = affectOf("The meeting is at three in room four.");
  const furious = affectOf("I am FURIOUS!!! This is the WORST thing ever!!!");
  t.ok(happy.valence > 0.5, `happy ${happy.valence}`);
  t.ok(sad.valence < -0.5, `sad ${sad.valence}`);
  t.equal(plain.valence, 0);
  t.ok(furious.arousal > plain.arousal + 0.5, `furious ${furious.arousal} vs plain ${plain.arousal}`);
  t.ok(plain.arousal < 0, "neutral text is calm");
  t.same(affectOf("   "), { valence: 0, arousal: 0 });
  t.ok(affectOf("I am not happy at all").valence < 0, "negation");
});

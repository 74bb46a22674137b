// What the dream scheduler queues, and when: the decision alone, over the settings and a
// moment (the end-to-end tests run it for real).
import t from "tap";
import { due, type Moment } from "../../src/dreams/scheduler.js";
import { citedSeeds } from "../../src/dreams/prompts.js";
import { defaultDreamSettings } from "../../src/dreams/settings.js";
import { loadConfig } from "../../src/config.js";

const settings = {
  ...defaultDreamSettings(loadConfig({}, {})),
  wake_lock_seconds: 5,
  idle_thought_delay_seconds: 30,
  dream_delay_seconds: 300,
  dream_cooldown_seconds: 600,
};
const quietFor = (quiet: number | null, more: Partial<Moment> = {}): Moment => ({
  quiet,
  conversation_id: "c0ffee00-0000-4000-8000-000000000000",
  since_dream: null,
  thought_since_request: false,
  busy: false,
  dnd: false,
  present: 0,
  budget_used: 0,
  paused_dream: false,
  ...more,
});

t.test("nothing within the wake lock, while busy, under do-not-disturb, or when disabled", async (t) => {
  t.equal(due(settings, quietFor(4), 100), undefined, "inside the wake lock, even with a reflection due");
  t.equal(due(settings, quietFor(400, { busy: true }), 100), undefined);
  t.equal(due(settings, quietFor(400, { dnd: true }), 100), undefined);
  t.equal(due({ ...settings, enabled: false }, quietFor(400), 100), undefined);
});

t.test("a client present holds dreams off, however quiet; idle thoughts and reflections still come", async (t) => {
  t.equal(due(settings, quietFor(10_000, { present: 1 }), 0), undefined, "quiet for hours, but a client is there");
  t.match(due(settings, quietFor(10_000, { present: 0 }), 0), { kind: "dream" }, "the same moment with no client: a dream");
  t.match(due(settings, quietFor(31, { present: 2 }), 0), { kind: "idle" });
  t.match(due(settings, quietFor(6, { present: 1 }), 8), { kind: "reflect" });
});

t.test("a reflection first, when the importance adds up (and only then)", async (t) => {
  t.match(due(settings, quietFor(6), 8), { kind: "reflect", maxTokens: 256, sliceSeconds: 6 });
  t.equal(due(settings, quietFor(6), 7.9), undefined);
  t.equal(due({ ...settings, reflection_threshold: 0 }, quietFor(6), 100), undefined, "threshold 0: never by itself");
});

t.test("an idle thought once per quiet spell, only while the conversation is open", async (t) => {
  t.match(due(settings, quietFor(31), 0), { kind: "idle", conversationId: "c0ffee00-0000-4000-8000-000000000000", maxTokens: 64 });
  t.equal(due(settings, quietFor(29), 0), undefined, "not yet quiet long enough");
  // (What comes instead, between chats, is a short dream within the budget: below.)
  t.not(due(settings, quietFor(31, { thought_since_request: true }), 0)?.kind, "idle", "one per quiet spell");
  t.not(due({ ...settings, idle_thoughts: false }, quietFor(31), 0)?.kind, "idle");
  t.equal(due({ ...settings, dream_budget: 0 }, quietFor(31, { thought_since_request: true }), 0), undefined);
  t.not(due(settings, quietFor(301), 0)?.kind, "idle", "past the dream delay it is a dream's time");
});

t.test("a dream after the delay and the cooldown", async (t) => {
  t.match(due(settings, quietFor(301), 0), { kind: "dream", maxTokens: settings.dream_max_tokens, temperature: 1.2 });
  t.match(due(settings, quietFor(null), 0), { kind: "dream" }, "no request ever");
  t.equal(due(settings, quietFor(301, { since_dream: 599 }), 0), undefined, "inside the cooldown");
  t.match(due(settings, quietFor(301, { since_dream: 601 }), 0), { kind: "dream" });
});

t.test("while someone is about, reveries share the model within the budget; asleep, a dream takes what it needs", async (t) => {
  // The default: a tenth of a minute.
  t.equal(settings.dream_budget, 0.1);
  t.equal(settings.dream_budget_window_seconds, 60);
  const spent = { thought_since_request: true };
  t.match(due(settings, quietFor(60, spent), 0), { kind: "dream", sliceSeconds: 6 }, "between chats: a short dream, cut to the share");
  t.match(due(settings, quietFor(60, { ...spent, budget_used: 3.5 }), 0), { kind: "dream", sliceSeconds: 2 }, "what is left of it");
  t.equal(due(settings, quietFor(60, { ...spent, budget_used: 4.5 }), 0), undefined, "too little left to start");
  t.equal(due(settings, quietFor(60, { budget_used: 4.5 }), 0), undefined, "an idle thought waits for the share too");
  t.equal(due(settings, quietFor(6, { budget_used: 6 }), 8), undefined, "and so does a reflection");
  t.match(due(settings, quietFor(301, { budget_used: 60 }), 8), { kind: "reflect" }, "asleep, the budget does not hold");
  t.equal(due(settings, quietFor(301, { budget_used: 60 }), 0)?.sliceSeconds, undefined, "and a dream is not cut");
  t.equal(due(settings, quietFor(60, { ...spent, present: 1 }), 0), undefined, "a client present still holds dreams off");
  t.equal(due(settings, quietFor(20, spent), 0), undefined, "not before the idle-thought delay");
  t.equal(due({ ...settings, dream_budget: 0 }, quietFor(60, spent), 0), undefined, "budget 0: none between chats");
  t.match(due({ ...settings, dream_budget: 0 }, quietFor(301), 0), { kind: "dream" }, "budget 0: asleep, still a dream");
  t.equal(due({ ...settings, dream_budget: 1 }, quietFor(60, spent), 0)?.sliceSeconds, undefined, "budget 1: no bound");
  t.equal(due(settings, quietFor(60, { ...spent, since_dream: 100 }), 0), undefined, "a new dream waits for the cooldown");
  t.match(
    due(settings, quietFor(60, { ...spent, since_dream: 100, paused_dream: true }), 0),
    { kind: "dream", sliceSeconds: 6 },
    "a paused one is continued regardless",
  );
  t.match(due(settings, quietFor(301, { since_dream: 100, paused_dream: true }), 0), { kind: "dream" }, "asleep too");
});

t.test("a reflection cites what its 'because of' names, or every seed", async (t) => {
  const seeds = [1, 2, 3, 4].map((n) => ({ id: `m${n}`, content: `memory ${n}` }));
  t.same(citedSeeds("Anna is anxious before recitals (because of 1, 3)\nShe practises hard (because of 2 and 4)", seeds).sort(), [
    "m1",
    "m2",
    "m3",
    "m4",
  ]);
  t.same(citedSeeds("Insight (because of 2)", seeds), ["m2"]);
  t.same(citedSeeds("Insight (because of 9)", seeds), ["m1", "m2", "m3", "m4"], "a number naming no seed cites none; then all");
  t.same(citedSeeds("no format at all", seeds), ["m1", "m2", "m3", "m4"]);
});

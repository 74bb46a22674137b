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
  t.match(due(settings, quietFor(6), 8), { kind: "reflect", maxTokens: 256 });
  t.equal(due(settings, quietFor(6), 7.9), undefined);
  t.equal(due({ ...settings, reflection_threshold: 0 }, quietFor(6), 100), undefined, "threshold 0: never by itself");
});

t.test("an idle thought once per quiet spell, only while the conversation is open", async (t) => {
  t.match(due(settings, quietFor(31), 0), { kind: "idle", conversationId: "c0ffee00-0000-4000-8000-000000000000", maxTokens: 64 });
  t.equal(due(settings, quietFor(29), 0), undefined, "not yet quiet long enough");
  t.equal(due(settings, quietFor(31, { thought_since_request: true }), 0), undefined, "one per quiet spell");
  t.equal(due({ ...settings, idle_thoughts: false }, quietFor(31), 0), undefined);
  t.not(due(settings, quietFor(301), 0)?.kind, "idle", "past the dream delay it is a dream's time");
});

t.test("a dream after the delay and the cooldown", async (t) => {
  t.match(due(settings, quietFor(301), 0), { kind: "dream", maxTokens: settings.dream_max_tokens, temperature: 1.2 });
  t.match(due(settings, quietFor(null), 0), { kind: "dream" }, "no request ever");
  t.equal(due(settings, quietFor(301, { since_dream: 599 }), 0), undefined, "inside the cooldown");
  t.match(due(settings, quietFor(301, { since_dream: 601 }), 0), { kind: "dream" });
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

// The mood: valence and arousal that move toward what happens and decay toward a baseline.
import type { Affect } from "./affect.js";

export interface MoodSettings {
  baseline: Affect;
  /** Minutes for the distance to the baseline to halve. */
  halfLifeMinutes: number;
  /** How far one event moves the mood toward its own affect, in (0, 1]. */
  sensitivity: number;
}

export interface MoodState extends Affect {
  at: Date;
}

const clamp = (x: number) => Math.max(-1, Math.min(1, x));

/** The mood at `now`, decayed exponentially toward the baseline since it was last set. */
export function decayedMood(state: MoodState | undefined, now: Date, s: MoodSettings): Affect {
  if (!state) return { ...s.baseline };
  const minutes = Math.max(0, now.getTime() - state.at.getTime()) / 60_000;
  const keep = 0.5 ** (minutes / s.halfLifeMinutes);
  return {
    valence: s.baseline.valence + (state.valence - s.baseline.valence) * keep,
    arousal: s.baseline.arousal + (state.arousal - s.baseline.arousal) * keep,
  };
}

/** The mood after an event with affect `stimulus`: the decayed mood moved toward it. */
export function reactedMood(state: MoodState | undefined, stimulus: Affect, now: Date, s: MoodSettings): Affect {
  const current = decayedMood(state, now, s);
  return {
    valence: clamp(current.valence + s.sensitivity * (stimulus.valence - current.valence)),
    arousal: clamp(current.arousal + s.sensitivity * (stimulus.arousal - current.arousal)),
  };
}

/** The mood in words, a line for the system prompt by default; `subject` opens the sentence. */
export function describeMood(m: Affect, subject = "Your current mood"): string {
  const v = m.valence > 0.25 ? "content" : m.valence < -0.25 ? "troubled" : "even";
  const a = m.arousal > 0.25 ? "energised" : m.arousal < -0.25 ? "calm" : "steady";
  return `${subject}: ${v} and ${a} (valence ${m.valence.toFixed(2)}, arousal ${m.arousal.toFixed(2)}, each from -1 to 1).`;
}

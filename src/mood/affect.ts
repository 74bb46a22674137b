// Valence and arousal of a text, from VADER (vader-sentiment): a validated sentiment lexicon
// with rules for negation, intensifiers, capitals and exclamation marks.
import vader from "vader-sentiment";

export interface Affect {
  /** Unpleasant (-1) to pleasant (+1). */
  valence: number;
  /** Calm (-1) to excited (+1). */
  arousal: number;
}

const clamp = (x: number) => Math.max(-1, Math.min(1, x));

/**
 * Valence is VADER's compound score. VADER has no arousal dimension; arousal is read from how
 * much of the text carries affect and how strongly (its non-neutral share and the compound's
 * magnitude, which VADER raises for capitals, intensifiers and "!"): neutral text is somewhat
 * calm (-0.5), vehement text excited (+1).
 */
export function affectOf(text: string): Affect {
  if (!text.trim()) return { valence: 0, arousal: 0 };
  const s = vader.SentimentIntensityAnalyzer.polarity_scores(text);
  const intensity = Math.max(1 - s.neu, Math.abs(s.compound));
  return { valence: clamp(s.compound), arousal: clamp(-0.5 + 1.5 * intensity) };
}

// How much a new memory matters, in [0, 1]: the seed formula (length, emotional intensity,
// conclusion markers, tool use: the significance score Psyche grew from) blended with novelty against what is
// already remembered.
import type { Affect } from "../mood/affect.js";

const CONCLUSION_MARKERS = [". ", ".\n", "I think", "I notice", "interesting"];

export interface SignificanceInput {
  text: string;
  affect: Affect;
  /** Tool calls made while producing the text. */
  toolCalls: number;
  /** Highest cosine similarity to an existing memory (same embedder); null if none. */
  maxSimilarity: number | null;
}

/** The seed document's score, unchanged: five parts of up to 0.2 each. */
export function seedSignificance(text: string, affect: Affect, toolCalls: number): number {
  let score = 0;
  if (text.length > 200) score += 0.2;
  if (text.length > 500) score += 0.2;
  if (toolCalls > 0) score += 0.2;
  score += Math.min(0.2, (Math.abs(affect.valence) + Math.abs(affect.arousal)) * 0.1);
  if (CONCLUSION_MARKERS.some((m) => text.includes(m))) score += 0.2;
  return Math.min(1, score);
}

/** Novelty: 1 for something unlike anything remembered, 0 for a repeat. */
export function novelty(maxSimilarity: number | null): number {
  return maxSimilarity === null ? 1 : Math.max(0, Math.min(1, 1 - maxSimilarity));
}

/** 80% the seed formula, 20% novelty. */
export function significance(input: SignificanceInput): number {
  const score = 0.8 * seedSignificance(input.text, input.affect, input.toolCalls) + 0.2 * novelty(input.maxSimilarity);
  return Math.round(Math.max(0, Math.min(1, score)) * 1000) / 1000;
}

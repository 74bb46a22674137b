// Ranking retrieved memories (Generative Agents' scheme): relevance, recency and importance,
// each min-max normalised over the candidates, then weighted. Relevance fuses the vector and
// full-text ranks by reciprocal rank fusion.

export interface RankWeights {
  relevance: number;
  recency: number;
  importance: number;
}

export interface RankSettings {
  weights: RankWeights;
  /** Hours after which recency has fallen to half (hyperbolic: a long tail, not a cliff). */
  recencyHalfLifeHours: number;
  /** RRF's k: larger flattens the difference between neighbouring ranks. */
  rrfK: number;
}

export interface Rankable {
  vector_rank: number | null;
  text_rank: number | null;
  importance: number;
  last_accessed_at: Date;
}

export interface Ranked<T> {
  memory: T;
  score: number;
  relevance: number;
  recency: number;
  importance: number;
}

export function reciprocalRankFusion(ranks: readonly (number | null)[], k: number): number {
  return ranks.reduce<number>((sum, r) => (r === null ? sum : sum + 1 / (k + r)), 0);
}

/**
 * Hyperbolic decay, 1 / (1 + age / halfLife): forgetting in people follows a power law more
 * than an exponential, and a months-old memory keeps enough recency for relevance to decide.
 */
export function recency(lastAccessed: Date, now: Date, halfLifeHours: number): number {
  const hours = Math.max(0, now.getTime() - lastAccessed.getTime()) / 3_600_000;
  return 1 / (1 + hours / halfLifeHours);
}

/** Scales to [0, 1]; when all values are equal they carry no preference (all 0). */
function minMax(xs: readonly number[]): number[] {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return xs.map((x) => (hi - lo > 1e-12 ? (x - lo) / (hi - lo) : 0));
}

export function rankMemories<T extends Rankable>(candidates: readonly T[], settings: RankSettings, now = new Date()): Ranked<T>[] {
  if (candidates.length === 0) return [];
  const rel = minMax(candidates.map((c) => reciprocalRankFusion([c.vector_rank, c.text_rank], settings.rrfK)));
  const rec = minMax(candidates.map((c) => recency(c.last_accessed_at, now, settings.recencyHalfLifeHours)));
  const imp = minMax(candidates.map((c) => c.importance));
  const w = settings.weights;
  return candidates
    .map((memory, i) => ({
      memory,
      relevance: rel[i]!,
      recency: rec[i]!,
      importance: imp[i]!,
      score: w.relevance * rel[i]! + w.recency * rec[i]! + w.importance * imp[i]!,
    }))
    .sort((a, b) => b.score - a.score);
}

/** The full-text query for a message: any of its words (to_tsquery stems them, drops stopwords). */
export function textQuery(text: string): string | null {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu)?.slice(0, 32) ?? [];
  const unique = [...new Set(words)];
  return unique.length ? unique.join(" | ") : null;
}

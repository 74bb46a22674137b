// Ranking retrieved memories. Relevance leads: what the query says (BM25 over the full-text
// index, with the memory's vector similarity as a smaller share), lifted by how well the rest
// of its conversation matches. Recency (from when the memory was formed) and importance then
// scale it: a fresh memory by up to half again (a week old, a quarter), importance by a tenth,
// so a memory that matches nothing stays at nothing however new or important it is, and one
// less than five-eighths as relevant as another never passes it. Weights are configurable
// (--recall-weight-*); the defaults come from the RealMem evaluation (bench/retrieval.ts,
// docs/benchmarks.md).

export interface RankWeights {
  /** The vector similarity's share of relevance (the rest is the BM25 score). */
  vector: number;
  /** How much the best match of a memory's conversation adds to its relevance. */
  conversation: number;
  /** The most recency can add, as a fraction of relevance. */
  recency: number;
  /** The most importance can add, as a fraction of relevance. */
  importance: number;
}

export interface RankSettings {
  weights: RankWeights;
  /** Hours after which recency has fallen to half (hyperbolic: a long tail, not a cliff). */
  recencyHalfLifeHours: number;
  /** Vector similarities below this say nothing about relevance. */
  minSimilarity: number;
  /**
   * The share of the top k kept for the best memory of each strong conversation
   * (seatConversations); 0: ranked by score alone.
   */
  conversationSeats: number;
}

export interface Rankable {
  similarity: number | null;
  text_score: number;
  importance: number;
  conversation_id: string | null;
  /** When the memory was formed: being recalled does not make it new. */
  created_at: Date;
}

export interface Ranked<T> {
  memory: T;
  score: number;
  /** In [0, 1], 1 for the most relevant candidate. */
  relevance: number;
  recency: number;
  importance: number;
}

/**
 * Hyperbolic decay, 1 / (1 + age / halfLife): forgetting in people follows a power law more
 * than an exponential, and a months-old memory keeps enough recency for relevance to decide.
 */
export function recency(formed: Date, now: Date, halfLifeHours: number): number {
  const hours = Math.max(0, now.getTime() - formed.getTime()) / 3_600_000;
  return 1 / (1 + hours / halfLifeHours);
}

export function rankMemories<T extends Rankable>(candidates: readonly T[], settings: RankSettings, now = new Date()): Ranked<T>[] {
  if (candidates.length === 0) return [];
  const w = settings.weights;
  const maxText = Math.max(0, ...candidates.map((c) => c.text_score));
  const own = candidates.map((c) => {
    const text = maxText > 0 ? c.text_score / maxText : 0;
    const vector = c.similarity !== null && c.similarity >= settings.minSimilarity ? c.similarity : 0;
    return (1 - w.vector) * text + w.vector * vector;
  });
  const best = new Map<string, number>();
  candidates.forEach(
    (c, i) => c.conversation_id !== null && best.set(c.conversation_id, Math.max(best.get(c.conversation_id) ?? 0, own[i]!)),
  );
  // A memory outside any conversation is a conversation of its own: the same lift, from itself.
  const relevance = candidates.map(
    (c, i) => own[i]! + w.conversation * (c.conversation_id === null ? own[i]! : best.get(c.conversation_id)!),
  );
  const top = Math.max(...relevance);
  return candidates
    .map((memory, i) => {
      const rec = recency(memory.created_at, now, settings.recencyHalfLifeHours);
      const rel = top > 0 ? relevance[i]! / top : 0;
      return {
        memory,
        relevance: rel,
        recency: rec,
        importance: memory.importance,
        score: rel * (1 + w.recency * rec + w.importance * memory.importance),
      };
    })
    .sort((a, b) => b.score - a.score);
}

/**
 * What a memory must reach to be put into a chat's prompt (memory/recall.ts): every token of
 * recalled text is read by the model before its first token, in every turn, so a prompt gets
 * what bears on the message, not always the budget's worth. `share`: its relevance against the
 * best candidate's. `coverage`: the share of the message's weight among the words it matches
 * (db/sql/memory-terms.ts, TextMatch); a memory found by meaning alone (no word matched) is
 * judged by its share alone.
 */
export interface RecallFloor {
  share: number;
  coverage: number;
}

/** Whether a ranked memory reaches `floor`. */
export function bearsOn(r: Ranked<Rankable & { text_coverage: number }>, floor: RecallFloor): boolean {
  if (r.relevance < floor.share) return false;
  return r.memory.text_score === 0 || r.memory.text_coverage >= floor.coverage;
}

/** A conversation gets a seat when its matches together are at least this share of the best conversation's. */
export const SEAT_STRENGTH = 0.4;

/**
 * Keeps one conversation from filling the top k. The conversation lift (above) helps find the
 * right turns, and it also ranks a good conversation's every turn above the best turn of the
 * next: on RealMem, a question whose answer spans sessions lost the others (docs/benchmarks.md).
 * So up to `share` of k seats go to the best memory of each conversation whose matches together
 * (the root of their summed squared scores: several good matches beat one) reach 40% of the
 * strongest's; the rest of the k are the best by score, and the k are in score order, so the
 * head of the list is what it was. What falls out of the k follows, in order. A memory outside
 * any conversation is its own.
 */
export function seatConversations<T extends Rankable>(ranked: readonly Ranked<T>[], k: number, share: number): Ranked<T>[] {
  const seats = Math.floor(k * share);
  if (seats < 2) return [...ranked];
  const groups = new Map<unknown, { first: Ranked<T>; strength: number }>();
  for (const r of ranked) {
    const key = r.memory.conversation_id ?? r;
    const g = groups.get(key);
    if (g) g.strength += r.score ** 2;
    else groups.set(key, { first: r, strength: r.score ** 2 });
  }
  const strongest = Math.max(0, ...[...groups.values()].map((g) => g.strength));
  const seated = new Set(
    [...groups.values()]
      .filter((g) => Math.sqrt(g.strength) >= SEAT_STRENGTH * Math.sqrt(strongest))
      .sort((a, b) => b.strength - a.strength)
      .slice(0, seats)
      .map((g) => g.first),
  );
  if (seated.size < 2) return [...ranked];
  const kept = new Set(seated);
  for (const r of ranked) {
    if (kept.size >= k) break;
    kept.add(r);
  }
  return [...ranked.filter((r) => kept.has(r)), ...ranked.filter((r) => !kept.has(r))];
}

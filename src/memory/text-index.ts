// What the full-text index holds for a memory (BM25, db/sql/memory-terms.ts): its own terms,
// and the terms of its neighbour in the same conversation at a lower weight, both ways. A turn
// of a conversation often says little by itself ("yes, let's go with the second plan"): its
// neighbours say what it was about (docs/decisions.md, "A memory's neighbours in its
// conversation are indexed with it").
import { insertMemoryTerms, memoryTerms, replaceMemoryTerms, type WeightedTerms } from "../db/sql/memory-terms.js";
import type { Queryable } from "../db/pool.js";
import { termCounts } from "./analyzer.js";

/** A neighbour's words count this much of a memory's own. */
export const CONTEXT_WEIGHT = 0.5;

/** Okapi BM25's usual constants: term-frequency saturation and length normalisation. */
export const BM25 = { k1: 1.2, b: 0.75 } as const;

export interface Indexable {
  id: string;
  content: string;
  summary: string | null;
}

const countsOf = (m: Omit<Indexable, "id">) => termCounts(m.summary ? `${m.summary}\n${m.content}` : m.content);

/** `counts` times `weight`, with the term '' carrying their summed weight (the length it adds). */
export function weighted(counts: ReadonlyMap<string, number>, weight: number): WeightedTerms {
  const terms = [""];
  const weights = [0];
  for (const [term, n] of counts) {
    terms.push(term);
    weights.push(n * weight);
    weights[0]! += n * weight;
  }
  return { terms, weights };
}

/** Sums several weighted term lists into one. */
export function merged(...lists: WeightedTerms[]): WeightedTerms {
  const sum = new Map<string, number>();
  for (const l of lists) l.terms.forEach((t, i) => sum.set(t, (sum.get(t) ?? 0) + l.weights[i]!));
  return { terms: [...sum.keys()], weights: [...sum.values()] };
}

/** Indexes memories on their own (no neighbours), in one statement. */
export async function indexMemories(db: Queryable, memories: readonly Indexable[]): Promise<void> {
  await insertMemoryTerms(
    db,
    memories.map((m) => ({ memoryId: m.id, list: weighted(countsOf(m), 1) })),
  );
}

/**
 * Indexes a new memory, with its conversation's latest memory as its neighbour (if any): each
 * gains the other's terms at CONTEXT_WEIGHT. Inside the storing transaction.
 */
export async function indexMemory(db: Queryable, memory: Indexable, neighbour?: Indexable): Promise<void> {
  const own = countsOf(memory);
  if (!neighbour) {
    await replaceMemoryTerms(db, memory.id, weighted(own, 1));
    return;
  }
  const theirs = countsOf(neighbour);
  await replaceMemoryTerms(db, memory.id, merged(weighted(own, 1), weighted(theirs, CONTEXT_WEIGHT)));
  // The neighbour as indexed (its own words and any earlier neighbour's), plus ours; one not
  // indexed yet (stored before the index) starts from its own words.
  const indexed = await memoryTerms(db, neighbour.id);
  const base = indexed.terms.length ? indexed : weighted(theirs, 1);
  await replaceMemoryTerms(db, neighbour.id, merged(base, weighted(own, CONTEXT_WEIGHT)));
}

/**
 * A corrected memory's index: its old words out, its new words in, what its conversation's
 * neighbours lent it kept. (The neighbours keep the old words they were lent: a correction is
 * rare, and their context is what was said then.) Inside the correcting transaction.
 */
export async function reindexMemory(db: Queryable, before: Indexable, after: Omit<Indexable, "id">): Promise<void> {
  const indexed = await memoryTerms(db, before.id);
  const next = merged(
    indexed.terms.length ? indexed : weighted(countsOf(before), 1),
    weighted(countsOf(before), -1),
    weighted(countsOf(after), 1),
  );
  const kept = { terms: [] as string[], weights: [] as number[] };
  next.terms.forEach((t, i) => {
    if (next.weights[i]! > 1e-9 || t === "") {
      kept.terms.push(t);
      kept.weights.push(Math.max(0, next.weights[i]!));
    }
  });
  await replaceMemoryTerms(db, before.id, kept);
}

// What a journal entry is about, in a few words: the content words of its text and of the
// memories it drew on, each weighed by how often it comes there and how rare it is among all
// memories (the full-text index's statistics, memory/text-index.ts), shown as the word was most
// often written. Common words of the whole memory ("user", "today") sink; the entry's own rise.
import type { Queryable } from "../db/pool.js";
import { termRarity } from "../db/sql/memory-terms.js";
import { STOPWORDS, stem, words } from "./analyzer.js";

/** Topics an entry gets at most. */
export const MAX_TOPICS = 5;

interface Candidate {
  count: number;
  /** How each written form of the stem came, to show the commonest. */
  forms: Map<string, number>;
}

/** The stems of `texts` with their counts and written forms (words of three letters or more). */
export function topicCandidates(texts: readonly string[]): Map<string, Candidate> {
  const out = new Map<string, Candidate>();
  for (const text of texts)
    for (const word of words(text)) {
      if (word.length < 3 || word.length > 32 || STOPWORDS.has(word) || /^\d+$/.test(word)) continue;
      const term = stem(word);
      const c = out.get(term) ?? { count: 0, forms: new Map() };
      c.count++;
      c.forms.set(word, (c.forms.get(word) ?? 0) + 1);
      out.set(term, c);
    }
  return out;
}

/** The best `n` candidates by count times rarity (idf over `memories`), as written; ties keep the order they came in. */
export function rankTopics(
  candidates: Map<string, Candidate>,
  rarity: { memories: number; df: Map<string, number> },
  n = MAX_TOPICS,
): string[] {
  const total = Math.max(1, rarity.memories);
  return [...candidates.entries()]
    .map(([term, c], order) => ({ c, order, score: c.count * Math.log(1 + total / (1 + (rarity.df.get(term) ?? 0))) }))
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, n)
    .map(({ c }) => [...c.forms.entries()].sort((a, b) => b[1] - a[1])[0]![0]);
}

export async function topicsOf(db: Queryable, texts: readonly string[], n = MAX_TOPICS): Promise<string[]> {
  const candidates = topicCandidates(texts);
  if (!candidates.size) return [];
  return rankTopics(candidates, await termRarity(db, [...candidates.keys()]), n);
}

// The baseline: plain Okapi BM25 (k1 1.2, b 0.75) over the same turns, in memory, grown one
// document at a time like Psyche's store, each turn on its own. Terms are Psyche's own
// (memory/analyzer.ts: English stopwords out, light stemming), so the two differ only in how
// they rank, not in what they count as a word.
import { terms } from "../src/memory/analyzer.js";

export class Bm25Index {
  private readonly postings = new Map<string, Map<number, number>>();
  private readonly lengths: number[] = [];
  private totalLength = 0;

  constructor(
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {}

  /** Adds a document; returns its number. */
  add(text: string): number {
    const doc = this.lengths.length;
    const ts = terms(text);
    this.lengths.push(ts.length);
    this.totalLength += ts.length;
    for (const t of ts) {
      let p = this.postings.get(t);
      if (!p) this.postings.set(t, (p = new Map()));
      p.set(doc, (p.get(doc) ?? 0) + 1);
    }
    return doc;
  }

  /** Every document that matches a query word, with its BM25 score. */
  scores(query: string): Map<number, number> {
    const n = this.lengths.length;
    const scores = new Map<number, number>();
    if (n === 0) return scores;
    const avgdl = this.totalLength / n || 1;
    for (const t of new Set(terms(query))) {
      const p = this.postings.get(t);
      if (!p) continue;
      const idf = Math.log(1 + (n - p.size + 0.5) / (p.size + 0.5));
      for (const [doc, tf] of p) {
        const dl = this.lengths[doc]!;
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * dl) / avgdl)));
      }
    }
    return scores;
  }

  /** The `k` best documents for `query` (any query word may match) that `keep` keeps, best first. */
  search(query: string, k: number, keep: (doc: number) => boolean = () => true): number[] {
    return [...this.scores(query).entries()]
      .filter(([doc]) => keep(doc))
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, k)
      .map(([doc]) => doc);
  }

  /** How many documents hold `term`, and how many there are. */
  documentFrequency(term: string): { df: number; n: number } {
    return { df: this.postings.get(term)?.size ?? 0, n: this.lengths.length };
  }
}

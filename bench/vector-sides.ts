// Does the vector side of retrieval earn its place? Issue 11 asks the built-in embedder to add
// what BM25 lacks, and to keep only what the RealMem evaluation says helps. This measures each
// candidate vector side in one run, everything else held equal: the same turns, BM25 over them
// (bench/bm25.ts), the same candidates as Memory.search takes (the top full-text matches and
// the nearest vectors) and Psyche's own ranking (src/memory/ranking.ts) with the configured
// weights. It runs in memory, without the store's conversation-neighbour indexing, so its
// figures sit below bench/retrieval.ts's; what it compares is the vector sides with each other.
import { loadConfig } from "../src/config.js";
import { terms } from "../src/memory/analyzer.js";
import { lexicalEmbedding } from "../src/memory/lexical-embedding.js";
import { MAX_MEMORY_CHARS, TEXT_CANDIDATES, vectorCandidates } from "../src/memory/memory.js";
import { rankMemories, type Rankable, type RankSettings } from "../src/memory/ranking.js";
import { Bm25Index } from "./bm25.js";
import { loadPersona, personaFiles } from "./realmem.js";

const K = 10;

/** A way to turn text into a vector, given the store so far (for a side that learns from it). */
interface VectorSide {
  name: string;
  /** The vector a turn is stored with (called once, when it is stored). */
  stored(text: string, conversation: string): readonly number[] | null;
  query(text: string): readonly number[] | null;
}

export interface VectorSideRow {
  side: string;
  /** The vector similarity's share of relevance. */
  weight: number;
  /** Whether the conversation lift was on. */
  conversation: boolean;
  turn5: number;
  turn10: number;
}

export interface VectorSidesResult {
  date: string;
  personas: number;
  queries: number;
  rows: VectorSideRow[];
}

function unit(v: Float64Array): number[] {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return Array.from(v, (x) => (n > 0 ? x / n : 0));
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function fnv1a(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * Random indexing learned from the store itself: each term has a fixed sparse random index
 * vector; its context vector sums the index vectors of the terms it has been said with (in the
 * same turn, or the turn before it in its conversation). A text's vector is the idf-weighted sum
 * of its terms' context vectors, so words this user says together point the same way, which BM25
 * cannot see. It needs no download, only the store; it is not in the product (this measures
 * whether it should be).
 */
export class StoreRandomIndexing implements VectorSide {
  readonly name = "random indexing, learned from the store (512)";
  private readonly context = new Map<string, Float64Array>();
  private previous: { conversation: string; terms: string[] } | undefined;

  constructor(
    private readonly bm25: Bm25Index,
    private readonly dims = 512,
    private readonly nonZero = 8,
  ) {}

  private addIndex(into: Float64Array, term: string, sign: number): void {
    for (let k = 0; k < this.nonZero; k++) into[fnv1a(term, k * 7919) % this.dims]! += sign * (fnv1a(term, k * 104_729 + 1) & 1 ? 1 : -1);
  }

  private embed(ts: readonly string[]): number[] {
    const v = new Float64Array(this.dims);
    for (const t of new Set(ts)) {
      const c = this.context.get(t);
      if (!c) continue;
      const { df, n } = this.bm25.documentFrequency(t);
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      const len = Math.sqrt(c.reduce((s, x) => s + x * x, 0));
      if (len > 0) for (let i = 0; i < this.dims; i++) v[i]! += (idf * c[i]!) / len;
    }
    return unit(v);
  }

  stored(text: string, conversation: string): number[] {
    const own = [...new Set(terms(text))];
    const said = this.previous?.conversation === conversation ? new Set([...own, ...this.previous.terms]) : new Set(own);
    const together = new Float64Array(this.dims);
    for (const t of said) this.addIndex(together, t, 1);
    for (const t of own) {
      let c = this.context.get(t);
      if (!c) this.context.set(t, (c = new Float64Array(this.dims)));
      for (let i = 0; i < this.dims; i++) c[i]! += together[i]!;
      this.addIndex(c, t, -1); // a term is not its own context
    }
    this.previous = { conversation, terms: own };
    return this.embed(own);
  }

  query(text: string): number[] {
    return this.embed(terms(text));
  }
}

function sides(bm25: Bm25Index): VectorSide[] {
  const lexical = (dims: number): VectorSide => ({
    name: `psyche-lexical-${dims}${dims === 256 ? " (the built-in embedder)" : ""}`,
    stored: (text) => lexicalEmbedding(text, dims),
    query: (text) => lexicalEmbedding(text, dims),
  });
  return [{ name: "none", stored: () => null, query: () => null }, lexical(256), lexical(1024), new StoreRandomIndexing(bm25)];
}

interface Stored extends Rankable {
  key: string;
}

export function benchVectorSides(datasetDir: string, limit = Infinity): VectorSidesResult {
  const config = loadConfig({}, {});
  const base: RankSettings = {
    weights: {
      vector: config.recallWeightVector,
      conversation: config.recallWeightConversation,
      recency: config.recallWeightRecency,
      importance: config.recallWeightImportance,
    },
    recencyHalfLifeHours: config.recallHalfLifeHours,
    minSimilarity: config.recallMinSimilarity,
    conversationSeats: config.recallConversationSeats,
  };
  // Each setting: which side, its weight, and whether the conversation lift is on.
  // 1: the vector side alone, what it knows by itself.
  const weights = [...new Set([base.weights.vector, 0.5, 1])];
  const found = new Map<string, { row: VectorSideRow; sum5: number; sum10: number }>();
  const tally = (side: string, weight: number, conversation: boolean, share5: number, share10: number) => {
    const id = `${side}|${weight}|${conversation}`;
    const t = found.get(id) ?? { row: { side, weight, conversation, turn5: 0, turn10: 0 }, sum5: 0, sum10: 0 };
    t.sum5 += share5;
    t.sum10 += share10;
    found.set(id, t);
  };
  let queries = 0;
  let personas = 0;
  // Every turn is formed at the same moment: recency is the same for all, and this compares relevance.
  const formed = new Date(0);
  for (const file of personaFiles(datasetDir).slice(0, limit)) {
    personas++;
    const persona = loadPersona(file);
    const bm25 = new Bm25Index();
    const all = sides(bm25);
    const stored: Stored[] = [];
    const vectors: (readonly number[] | null)[][] = all.map(() => []);
    for (const step of persona.steps) {
      if (step.kind === "turn") {
        const content = step.turn.content.slice(0, MAX_MEMORY_CHARS).trim();
        if (!content) continue;
        bm25.add(content);
        all.forEach((side, i) => vectors[i]!.push(side.stored(content, step.turn.session)));
        stored.push({
          key: step.turn.key,
          similarity: null,
          text_score: 0,
          importance: 0,
          conversation_id: step.turn.session,
          created_at: formed,
        });
        continue;
      }
      const q = step.query;
      if (q.evidenceTurns.length === 0) continue;
      queries++;
      const text = [...bm25.scores(q.text).entries()].sort((a, b) => b[1] - a[1]).slice(0, TEXT_CANDIDATES);
      all.forEach((side, i) => {
        const qv = side.query(q.text);
        const similarity = (d: number) => (qv && vectors[i]![d] ? dot(qv, vectors[i]![d]!) : null);
        const byVector = qv
          ? stored
              .map((_, d) => [d, similarity(d)!] as const)
              .filter(([, s]) => s >= base.minSimilarity)
              .sort((a, b) => b[1] - a[1])
              .slice(0, vectorCandidates(K))
              .map(([d]) => d)
          : [];
        const textScore = new Map(text);
        const candidates = [...new Set([...text.map(([d]) => d), ...byVector])].map((d) => ({
          ...stored[d]!,
          similarity: similarity(d),
          text_score: textScore.get(d) ?? 0,
        }));
        for (const weight of qv ? weights : [0]) {
          for (const conversation of [true, false]) {
            const settings = {
              ...base,
              weights: { ...base.weights, vector: weight, conversation: conversation ? base.weights.conversation : 0 },
            };
            const top = rankMemories(candidates, settings, formed)
              .slice(0, K)
              .map((r) => r.memory.key);
            const share = (k: number) => q.evidenceTurns.filter((e) => top.slice(0, k).includes(e)).length / q.evidenceTurns.length;
            tally(side.name, weight, conversation, share(5), share(10));
          }
        }
      });
    }
  }
  const rows = [...found.values()].map(({ row, sum5, sum10 }) => ({ ...row, turn5: sum5 / queries, turn10: sum10 / queries }));
  return { date: new Date().toISOString(), personas, queries, rows };
}

// The built-in embedder: deterministic, no model file. Feature hashing of words, word pairs and
// character trigrams into a fixed number of signed dimensions, so texts that share words, word
// stems or word order land near each other (cosine similarity), and unrelated texts do not.
// It knows no synonyms: a real embedding model (--embedding-model) does better on meaning.

import { STOPWORDS, stem, words } from "./analyzer.js";

export const LEXICAL_DIMENSIONS = 256;
export const LEXICAL_EMBEDDER_ID = `psyche-lexical-${LEXICAL_DIMENSIONS}`;

/** 32-bit FNV-1a, with a seed so one string gives independent hashes. */
function fnv1a(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

function add(vector: Float64Array, feature: string, weight: number): void {
  const index = fnv1a(feature, 0) % vector.length;
  const sign = fnv1a(feature, 0x9e3779b9) & 1 ? 1 : -1;
  vector[index]! += sign * weight;
}

/** A unit-length vector (all zeros for a text without words). */
export function lexicalEmbedding(text: string, dimensions = LEXICAL_DIMENSIONS): number[] {
  const counts = new Map<string, number>();
  const bump = (feature: string, weight: number) => counts.set(feature, (counts.get(feature) ?? 0) + weight);
  const all = words(text);
  const kept = all.filter((w) => !STOPWORDS.has(w)).map(stem);
  // A text of stopwords alone ("yes, that is it") or of no words ("!!") still gets a direction
  // of its own: a zero vector has no cosine, and pgvector would answer NaN for it.
  const content = kept.length ? kept : all.length ? all : [text.trim() || "<empty>"];
  content.forEach((w, i) => {
    bump(`w:${w}`, 1);
    if (i > 0) bump(`b:${content[i - 1]}_${w}`, 0.5);
    // Trigrams of the padded stem: shared roots and misspellings still overlap.
    const padded = `<${w}>`;
    const grams = Math.max(1, padded.length - 2);
    for (let j = 0; j + 3 <= padded.length; j++) bump(`c:${padded.slice(j, j + 3)}`, 0.5 / grams);
  });
  const vector = new Float64Array(dimensions);
  // Sublinear term frequency: a word said ten times is not ten times the topic.
  for (const [feature, count] of counts) add(vector, feature, count >= 1 ? 1 + Math.log(count) : count);
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  return Array.from(vector, (x) => (norm > 0 ? x / norm : 0));
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

// The built-in embedder: deterministic, no model file. Feature hashing of words, word pairs and
// character trigrams into a fixed number of signed dimensions, so texts that share words, word
// stems or word order land near each other (cosine similarity), and unrelated texts do not.
// It knows no synonyms: a real embedding model (--embedding-model) does better on meaning.

export const LEXICAL_DIMENSIONS = 256;
export const LEXICAL_EMBEDDER_ID = `psyche-lexical-${LEXICAL_DIMENSIONS}`;

// Function words carry little topic; leaving them out keeps "the" from making texts similar.
const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its " +
    "me my of on or our she so than that the their them then there these they this to too us was we were what when where " +
    "which who why will with would you your"
  ).split(" "),
);

/** Lower-cased words with diacritics removed; apostrophes kept inside words. */
export function words(text: string): string[] {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? [];
}

/** A light English suffix stripper: enough for "dreams"/"dreaming"/"dreamed" to meet. */
export function stem(word: string): string {
  let w = word.replace(/'s$/, "");
  if (w.length > 5 && w.endsWith("ies")) return `${w.slice(0, -3)}y`;
  for (const suffix of ["ingly", "edly", "ing", "ed", "ly", "es", "s"]) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  return w;
}

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
  const content = words(text)
    .filter((w) => !STOPWORDS.has(w))
    .map(stem);
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

// How text becomes terms, for the full-text index (BM25, memory/text-index.ts) and the built-in
// embedder alike: lower-cased words without diacritics, English function words left out,
// a light suffix stripper so "dreams"/"dreaming"/"dreamed" meet.

// Function words carry little topic; leaving them out keeps "the" from making texts similar.
export const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its " +
    "me my of on or our she so than that the their them then there these they this to too us was we were what when where " +
    "which who why will with would you your"
  ).split(" "),
);

/** Lower-cased words with diacritics removed; apostrophes kept inside words. */
export function words(text: string): string[] {
  return (
    text
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+(?:'[\p{L}]+)?/gu) ?? []
  );
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

/** Longest term kept: longer "words" are noise (hashes, base64) and would bloat the index. */
const MAX_TERM = 48;

/** The stemmed content words of a text, in order. */
export function terms(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w) && w.length <= MAX_TERM)
    .map(stem);
}

/** Each term's count in a text. */
export function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of terms(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

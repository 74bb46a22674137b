// A tokenizer that remembers the long texts it has tokenized. A turn's whole prompt is tokenized
// four times on the main thread: the route's context check (conversation/context-fit.ts), the
// slot choice and the usage count (inference/llama-engine.ts), and node-llama-cpp's context window
// (LlamaChat, through `model.tokenizer`). A coding agent also sends the same system prompt every
// turn (docs/decisions.md, "Long texts are tokenized once"). Once remembered, a text costs a copy
// of its tokens.
import type { LlamaModel, Token, Tokenizer } from "node-llama-cpp";
import { replaceTokenizer } from "./llama-internals.js";

/** Shorter texts are tokenized each time: cheaper than remembering them. */
export const CACHED_MIN_CHARS = 1024;
/**
 * The most characters of text remembered together: some twenty agents' system prompts and tools,
 * about a million tokens, which with the texts themselves take some 16 MB.
 */
export const CACHED_MAX_CHARS = 4_000_000;

export interface CachingTokenizer extends Tokenizer {
  /** Texts answered from memory, and texts tokenized and remembered. */
  readonly stats: { hits: number; misses: number };
}

export function cachingTokenizer(tokenizer: Tokenizer, maxChars = CACHED_MAX_CHARS): CachingTokenizer {
  // A Map keeps insertion order: a hit is moved to the end, eviction takes from the front.
  const cache = new Map<string, readonly Token[]>();
  let chars = 0;
  const stats = { hits: 0, misses: 0 };
  const tokenize = (text: string, specialTokens?: boolean | "builtin", options?: "trimLeadingSpace"): Token[] => {
    if (specialTokens === "builtin") return (tokenizer as (text: string, specialTokens: "builtin") => Token[])(text, "builtin");
    if (text.length < CACHED_MIN_CHARS || text.length > maxChars) return tokenizer(text, specialTokens, options);
    const key = `${specialTokens ? 1 : 0}${options === "trimLeadingSpace" ? 1 : 0}${text}`;
    const known = cache.get(key);
    if (known) {
      stats.hits++;
      cache.delete(key);
      cache.set(key, known);
      // A copy: callers may change the array they are given.
      return known.slice();
    }
    stats.misses++;
    const tokens = tokenizer(text, specialTokens, options);
    cache.set(key, tokens.slice());
    chars += key.length;
    for (const [oldest] of cache) {
      if (chars <= maxChars) break;
      cache.delete(oldest);
      chars -= oldest.length;
    }
    return tokens;
  };
  return Object.assign(tokenize as Tokenizer, {
    detokenize: tokenizer.detokenize,
    isSpecialToken: tokenizer.isSpecialToken,
    isEogToken: tokenizer.isEogToken,
    stats,
  });
}

/**
 * Gives `model` a caching tokenizer where node-llama-cpp reads it (`model.tokenizer`, which its
 * LlamaChat uses for every context window), so that its tokenizing and Psyche's share one cache.
 */
export function cacheModelTokenizer(model: LlamaModel): CachingTokenizer {
  return replaceTokenizer(model, cachingTokenizer(model.tokenizer));
}

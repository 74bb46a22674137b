// A real byte-level BPE vocabulary for generated models: GPT-4's cl100k_base, as the js-tiktoken
// package ships it (ranks only). GGUF's "gpt2" tokenizer wants merges as well: each token's merge
// is recovered from the ranks (a token of rank r is the BPE of its bytes using only ranks below
// r, which ends in exactly two parts), the way tiktoken vocabularies are converted for llama.cpp.
// With it, a prompt of N tokens for a real model is N tokens for the test model too.
import cl100k from "js-tiktoken/ranks/cl100k_base";
import type { Vocab } from "./vocab.js";

const TokenType = { NORMAL: 1, CONTROL: 3 } as const;

/** GPT-2's reversible map from bytes to printable characters, which byte-level BPE tokens are written in. */
function byteToUnicode(): string[] {
  const printable = new Set<number>();
  for (let b = 0x21; b <= 0x7e; b++) printable.add(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.add(b);
  for (let b = 0xae; b <= 0xff; b++) printable.add(b);
  const out: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) out.push(String.fromCharCode(printable.has(b) ? b : 256 + extra++));
  return out;
}

/** Rank order of every token's bytes (as latin1 strings, so that they can key a Map). */
function ranks(bpeRanks: string): string[] {
  const byRank: string[] = [];
  for (const line of bpeRanks.split("\n")) {
    if (!line) continue;
    const [, offset, ...tokens] = line.split(" ");
    const base = Number.parseInt(offset!, 10);
    tokens.forEach((token, i) => (byRank[base + i] = Buffer.from(token, "base64").toString("latin1")));
  }
  return byRank;
}

/** The two parts BPE splits `bytes` into when only ranks below `limit` may merge. */
function lastMerge(bytes: string, rankOf: Map<string, number>, limit: number): [string, string] | undefined {
  const parts = [...bytes];
  for (;;) {
    let best = -1;
    let bestRank = limit;
    for (let i = 0; i < parts.length - 1; i++) {
      const rank = rankOf.get(parts[i]! + parts[i + 1]!);
      if (rank !== undefined && rank < bestRank) {
        best = i;
        bestRank = rank;
      }
    }
    if (best < 0) break;
    parts.splice(best, 2, parts[best]! + parts[best + 1]!);
  }
  return parts.length === 2 ? [parts[0]!, parts[1]!] : undefined;
}

export interface BpeVocab extends Vocab {
  merges: string[];
  /** llama.cpp's pre-tokenizer: cl100k's split pattern is llama 3's. */
  pre: string;
}

/**
 * cl100k_base (100,256 tokens), its special tokens at their ids, reserved ids filled, then
 * ChatML's two control tokens. The random model is steered to printable ASCII tokens.
 */
/** A tiktoken vocabulary's ranks as GGUF's byte-level BPE: tokens spelled in GPT-2's alphabet, and merges. */
export function tiktokenAsBpe(bpeRanks: string): { byRank: string[]; tokens: string[]; merges: string[] } {
  const byRank = ranks(bpeRanks);
  const rankOf = new Map(byRank.map((bytes, rank) => [bytes, rank]));
  const unicode = byteToUnicode();
  const spell = (bytes: string) => [...bytes].map((c) => unicode[c.charCodeAt(0)]).join("");
  const tokens = byRank.map(spell);
  const merges: string[] = [];
  byRank.forEach((bytes, rank) => {
    if (bytes.length < 2) return;
    const pair = lastMerge(bytes, rankOf, rank);
    if (pair) merges.push(`${spell(pair[0])} ${spell(pair[1])}`);
  });
  return { byRank, tokens, merges };
}

export function buildCl100kVocab(): BpeVocab {
  const { byRank, tokens, merges } = tiktokenAsBpe(cl100k.bpe_ranks);
  const types: number[] = tokens.map(() => TokenType.NORMAL);
  const special = (id: number, text: string) => {
    while (tokens.length < id) {
      types.push(TokenType.CONTROL);
      tokens.push(`<|reserved_${tokens.length}|>`);
    }
    tokens[id] = text;
    types[id] = TokenType.CONTROL;
  };
  for (const [text, id] of Object.entries(cl100k.special_tokens).sort((a, b) => a[1] - b[1])) special(id, text);
  const imStart = tokens.length;
  special(imStart, "<|im_start|>");
  special(imStart + 1, "<|im_end|>");
  const eosId = imStart + 1;
  const printableAscii = /^[\x20-\x7e\n]+$/;
  const discouraged = new Set<number>();
  tokens.forEach((_, id) => {
    const bytes = byRank[id];
    if (id !== eosId && (types[id] === TokenType.CONTROL || bytes === undefined || !printableAscii.test(bytes))) discouraged.add(id);
  });
  return {
    tokens,
    scores: new Float32Array(tokens.length),
    types: Int32Array.from(types),
    unkId: cl100k.special_tokens["<|endoftext|>"]!,
    bosId: cl100k.special_tokens["<|endoftext|>"]!,
    eosId,
    discouraged,
    merges,
    pre: "llama-bpe",
  };
}

// A SentencePiece-style ("llama") vocabulary with byte fallback and ChatML control tokens.
const TokenType = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, BYTE: 6 } as const;

export interface Vocab {
  tokens: string[];
  scores: Float32Array;
  types: Int32Array;
  unkId: number;
  bosId: number;
  eosId: number;
  /** Tokens the random model is steered away from (controls, bytes). */
  discouraged: Set<number>;
}

const SPACE = "\u2581";
const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const WORDS = ["the", "and", "you", "dream", "memory", "mood", "hello", "psyche", "is", "of", "to", "in", "it", "that", "I", "a"];

/**
 * `size` 0 gives the minimal vocabulary (~370 tokens). A larger size is filled with
 * letter pairs and triples (each one's prefix is in the vocabulary, so merges can form it).
 */
export function buildVocab(size: number): Vocab {
  const tokens: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  const add = (piece: string, type: number, score: number) => {
    tokens.push(piece);
    types.push(type);
    scores.push(score);
  };
  add("<unk>", TokenType.UNKNOWN, 0);
  add("<s>", TokenType.CONTROL, 0);
  add("</s>", TokenType.CONTROL, 0);
  add("<|im_start|>", TokenType.CONTROL, 0);
  add("<|im_end|>", TokenType.CONTROL, 0);
  for (let b = 0; b < 256; b++) add(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`, TokenType.BYTE, 0);
  const seen = new Set<string>();
  const piece = (p: string, score: number) => {
    if (seen.has(p) || (size > 0 && tokens.length >= size)) return;
    seen.add(p);
    add(p, TokenType.NORMAL, score);
  };
  piece(SPACE, -1);
  for (let c = 0x21; c < 0x7f; c++) piece(String.fromCharCode(c), -2);
  for (const w of WORDS) {
    // every prefix of "▁word", so SentencePiece's bigram merges can build the word
    const full = SPACE + w;
    for (let i = 2; i <= full.length; i++) piece(full.slice(0, i), -10 + i);
  }
  if (size > 0) {
    const alphabet = SPACE + LETTERS;
    for (const a of alphabet) for (const b of LETTERS) piece(a + b, -20);
    outer: for (const a of alphabet)
      for (const b of LETTERS)
        for (const c of LETTERS) {
          if (tokens.length >= size) break outer;
          piece(a + b + c, -30);
        }
    for (let i = 0; tokens.length < size; i++) piece(`${SPACE}w${i}`, -40); // padding pieces, if ever needed
  }
  const discouraged = new Set<number>();
  types.forEach((type, id) => {
    if (type === TokenType.CONTROL || type === TokenType.BYTE || type === TokenType.UNKNOWN) discouraged.add(id);
  });
  const eosId = 4;
  discouraged.delete(eosId);
  return {
    tokens,
    scores: Float32Array.from(scores),
    types: Int32Array.from(types),
    unkId: 0,
    bosId: 1,
    eosId,
    discouraged,
  };
}

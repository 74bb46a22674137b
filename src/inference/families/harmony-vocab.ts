// gpt-oss's tokenizer, o200k_harmony, as GGUF's tokenizer keys: o200k_base's ranks (as the
// js-tiktoken package ships them) and Harmony's special tokens at the ids gpt-oss has them, the
// rest of its 201,088 ids reserved. No vocabulary file of it is in llama.cpp's source.
import o200k from "js-tiktoken/ranks/o200k_base";
import { tiktokenAsBpe } from "../bpe-vocab.js";
import { type TokenizerKeys, TokenType } from "./families.js";

const HARMONY_SPECIAL: Record<number, string> = {
  199998: "<|startoftext|>",
  199999: "<|endoftext|>",
  200002: "<|return|>",
  200003: "<|constrain|>",
  200005: "<|channel|>",
  200006: "<|start|>",
  200007: "<|end|>",
  200008: "<|message|>",
  200012: "<|call|>",
  200018: "<|endofprompt|>",
};

const HARMONY_SIZE = 201088;

export function harmonyVocabulary(): TokenizerKeys {
  const { tokens, merges } = tiktokenAsBpe(o200k.bpe_ranks);
  const types: number[] = tokens.map(() => TokenType.NORMAL);
  for (let id = tokens.length; id < HARMONY_SIZE; id++) {
    tokens.push(HARMONY_SPECIAL[id] ?? `<|reserved_${id}|>`);
    types.push(TokenType.CONTROL);
  }
  // llama.cpp's pre-tokenizer for o200k's split pattern is "gpt-4o".
  return { model: "gpt2", pre: "gpt-4o", tokens, token_type: types, merges };
}

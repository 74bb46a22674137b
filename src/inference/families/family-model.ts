// A family's test model: random weights (inference/random-model.ts) under the family's real
// tokenizer and chat template (inference/families/families.ts), written as one GGUF file. The
// tokenizer's keys are copied from the vocabulary file as they are, so llama.cpp tokenizes as it
// does for the real model; tokens the file lacks are put at the real model's ids.
import { readFileSync } from "node:fs";
import { type Family, type TokenizerKeys, TokenType } from "./families.js";
import { llamaCppFile } from "./llama-cpp-files.js";
import { architectureMetadata, randomModelTensors, type RandomModelShape, TINY_AGENT_SHAPE } from "../random-model.js";
import { type MetadataValue, writeGguf } from "../gguf/writer.js";

/** The family models' shape: the tiny model's, a real model's 32k context, the end of turn as likely as tiny-agent's. */
export const FAMILY_SHAPE: RandomModelShape = { ...TINY_AGENT_SHAPE, name: "psyche-tiny-family" };

/** GPT-2's byte-level alphabet, back to bytes: what a byte-level BPE token spells. */
const bpeBytes = (() => {
  const map = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    map.set(String.fromCharCode(printable ? b : 256 + extra++), b);
  }
  return map;
})();

/** The text a normal token stands for: byte-level BPE decoded, SentencePiece's ▁ as a space. */
function tokenText(piece: string, byteLevel: boolean): string | undefined {
  if (!byteLevel) return piece.replaceAll("\u2581", " ");
  const bytes: number[] = [];
  for (const ch of piece) {
    const b = bpeBytes.get(ch);
    if (b === undefined) return undefined;
    bytes.push(b);
  }
  return Buffer.from(bytes).toString("latin1");
}

/** The tokens a random model is steered away from: every special one, and any that is not printable ASCII. */
export function discouragedTokens(tokens: readonly string[], types: ArrayLike<number>, byteLevel: boolean, keep: number): Set<number> {
  const out = new Set<number>();
  const printable = /^[\x20-\x7e\n]+$/;
  tokens.forEach((piece, id) => {
    if (id === keep) return;
    const text = types[id] === TokenType.NORMAL ? tokenText(piece, byteLevel) : undefined;
    if (text === undefined || !printable.test(text)) out.add(id);
  });
  return out;
}

/** A GGUF value as written back: typed by its key where the value's JavaScript type does not say. */
function asMetadata(key: string, value: unknown): MetadataValue | undefined {
  if (typeof value === "boolean") return { type: "bool", value };
  if (typeof value === "string") return { type: "string", value };
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 ? { type: "u32", value } : { type: "f32", value };
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    const list = value as ArrayLike<unknown>;
    if (list.length === 0 || typeof list[0] === "string") return { type: "string[]", value: Array.from(list as ArrayLike<string>) };
    return key === "scores" ? { type: "f32[]", value: list as ArrayLike<number> } : { type: "i32[]", value: list as ArrayLike<number> };
  }
  return undefined;
}

/** The family's tokenizer keys: from its vocabulary file (or tiktoken's), with the real model's added tokens. */
export async function familyTokenizer(family: Family, cacheDir: string): Promise<TokenizerKeys> {
  let keys: TokenizerKeys;
  if ("gguf" in family.vocabulary) {
    const { readGgufFileInfo } = await import("node-llama-cpp");
    const info = await readGgufFileInfo(llamaCppFile(family.vocabulary.gguf, cacheDir), { readTensorInfo: false });
    keys = { ...(info.metadata.tokenizer?.ggml as unknown as TokenizerKeys) };
  } else {
    // o200k's ranks are megabytes of text: loaded only for the family that needs them.
    const { harmonyVocabulary } = await import("./harmony-vocab.js");
    keys = harmonyVocabulary();
  }
  const tokens = [...(keys.tokens as string[])];
  const types = Array.from(keys.token_type as ArrayLike<number>);
  const known = tokens.length;
  for (const [id, [text, type]] of Object.entries(family.added ?? {})) {
    tokens[Number(id)] = text;
    types[Number(id)] = type;
  }
  // Ids added past the file's end: the gaps are reserved controls, and scored where the file scores.
  for (let id = known; id < tokens.length; id++) {
    tokens[id] ??= `[control_${id}]`;
    types[id] ??= TokenType.CONTROL;
  }
  const scores = keys.scores
    ? [...Array.from(keys.scores as ArrayLike<number>), ...new Array<number>(tokens.length - known).fill(0)]
    : undefined;
  return { ...keys, tokens, token_type: types, ...(scores ? { scores } : {}) };
}

/** Writes `family`'s random-weight model to `path`: deterministic for a seed, as the vocabulary file is. */
export async function writeFamilyModel(path: string, family: Family, cacheDir: string, seed = 42): Promise<void> {
  const keys = await familyTokenizer(family, cacheDir);
  const tokens = keys.tokens as string[];
  const idOf = (text: string) => {
    const id = tokens.indexOf(text);
    if (id < 0) throw new Error(`the ${family.name} vocabulary has no ${text} token`);
    return id;
  };
  const bos = idOf(family.bos);
  const eos = idOf(family.eos);
  const eot = family.eot ? idOf(family.eot) : eos;
  const byteLevel = keys.model === "gpt2";
  // The weights end a reply with the turn's end, as the real model does.
  const vocab = { tokens, eosId: eot, discouraged: discouragedTokens(tokens, keys.token_type as number[], byteLevel, eot) };
  const tokenizer: Record<string, MetadataValue> = {};
  for (const [key, value] of Object.entries(keys)) {
    const meta = asMetadata(key, value);
    if (meta) tokenizer[`tokenizer.ggml.${key}`] = meta;
  }
  const shape = { ...FAMILY_SHAPE, name: family.generalName };
  writeGguf(
    path,
    {
      ...architectureMetadata(family.architecture, shape, tokens.length),
      "general.name": { type: "string", value: family.generalName },
      "general.basename": { type: "string", value: `psyche-tiny-${family.name}` },
      ...tokenizer,
      "tokenizer.ggml.bos_token_id": { type: "u32", value: bos },
      "tokenizer.ggml.eos_token_id": { type: "u32", value: eos },
      ...(family.eot ? { "tokenizer.ggml.eot_token_id": { type: "u32", value: eot } } : {}),
      "tokenizer.ggml.add_bos_token": { type: "bool", value: family.addBos },
      "tokenizer.ggml.add_eos_token": { type: "bool", value: false },
      "tokenizer.chat_template": { type: "string", value: readFileSync(llamaCppFile(family.template, cacheDir), "utf8") },
    },
    randomModelTensors(shape, vocab, seed, family.architecture),
  );
}

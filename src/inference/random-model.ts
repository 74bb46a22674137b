// Random-weight llama models with a real tokenizer and a ChatML chat template: they
// produce nonsense at real speed through the real code path (README.md, "Two commands").
// Weights are shaped so the model prefers printable ASCII (random bytes are invalid UTF-8, which
// breaks JSON-schema length checks):
// dimension 0 of the residual stream is a constant 1 (no layer writes into it), and the
// output rows of control and byte tokens have a large negative weight on it.
import { encodeRows } from "./gguf/encode.js";
import { GgmlType, type MetadataValue, type TensorSpec, writeGguf } from "./gguf/writer.js";
import { buildVocab, type Vocab } from "./vocab.js";
import { type BpeVocab, buildCl100kVocab } from "./bpe-vocab.js";

export interface RandomModelShape {
  name: string;
  embedding: number;
  layers: number;
  heads: number;
  kvHeads: number;
  feedForward: number;
  vocabSize: number;
  contextLength: number;
  /** Type of the 2-D weight matrices; norms are always F32. */
  matrixType: GgmlType;
  /** Weight of the end-of-turn token's logit on the constant dimension: higher stops sooner. */
  endOfTurnBias: number;
  /** "cl100k": GPT-4's byte-level BPE vocabulary (inference/bpe-vocab.ts) instead of a generated one; vocabSize is then ignored. */
  tokenizer?: "cl100k";
}

/** Under 1 MB, decodes at ~1-2k tokens/s on 2 cores: for tests. */
export const TINY_SHAPE: RandomModelShape = {
  name: "psyche-tiny",
  embedding: 64,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  feedForward: 128,
  vocabSize: 0, // the minimal vocabulary: specials, bytes, printable ASCII, a few words
  contextLength: 4096,
  matrixType: GgmlType.F32,
  endOfTurnBias: -2,
};

/**
 * The tiny model with what a coding agent's prompt needs: a real tokenizer (GPT-4's, so a
 * 20,000-token prompt is 20,000 tokens here too) and a real model's 32k context. About 14 MB.
 */
export const TINY_AGENT_SHAPE: RandomModelShape = {
  ...TINY_SHAPE,
  name: "psyche-tiny-agent",
  contextLength: 32768,
  matrixType: GgmlType.Q8_0,
  tokenizer: "cl100k",
  // Some 60,000 tokens compete with the end of turn (not 300): it needs this much to end a reply in tens of tokens.
  endOfTurnBias: 8,
};

/** Shaped like a ~0.5B-parameter chat model (Qwen2-0.5B's dimensions), Q8_0: for benchmarks. */
export const BENCH_SHAPE: RandomModelShape = {
  name: "psyche-bench-0.5b",
  embedding: 896,
  layers: 24,
  heads: 14,
  kvHeads: 2,
  feedForward: 4864,
  vocabSize: 32000,
  // An agent session's 20k-token prompt fits (bench/serving.ts).
  contextLength: 32768,
  matrixType: GgmlType.Q8_0,
  endOfTurnBias: -30, // practically never stops by itself: benchmarks control the length
};

export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** xorshift32: deterministic, fast, good enough for weights. */
function makeRandom(seed: number) {
  let s = seed >>> 0 || 0x9e3779b9;
  const next = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
  /** Approximately normal (sum of uniforms), mean 0, standard deviation `std`. */
  const normal = (std: number) => (next() + next() + next() + next() - 2) * std * 1.7320508;
  return { next, normal };
}

type RowFiller = (row: number, out: Float32Array) => void;

function matrix(name: string, cols: number, rows: number, type: GgmlType, fill: RowFiller): TensorSpec {
  return {
    name,
    dims: [cols, rows],
    type,
    data: () => {
      const values = new Float32Array(cols * rows);
      for (let r = 0; r < rows; r++) fill(r, values.subarray(r * cols, (r + 1) * cols));
      return encodeRows(values, type);
    },
  };
}

function ones(name: string, n: number): TensorSpec {
  return { name, dims: [n], type: GgmlType.F32, data: () => encodeRows(new Float32Array(n).fill(1), GgmlType.F32) };
}

/** What the weights need of a vocabulary: its size, the token that ends a turn, the tokens steered away from. */
export type WeightsVocab = Pick<Vocab, "tokens" | "eosId" | "discouraged">;

/** GGUF architectures the generated models come in: llama's tensors, and qwen3's norms of queries and keys. */
export type RandomArchitecture = "llama" | "qwen2" | "qwen3";

export function randomModelTensors(
  shape: RandomModelShape,
  vocab: WeightsVocab,
  seed: number,
  architecture: RandomArchitecture = "llama",
): TensorSpec[] {
  const rand = makeRandom(seed);
  const n = shape.embedding;
  const headDim = n / shape.heads;
  const kvDim = headDim * shape.kvHeads;
  const t = shape.matrixType;
  const gaussianRow = (std: number) => (_row: number, out: Float32Array) => {
    for (let i = 0; i < out.length; i++) out[i] = rand.normal(std);
  };
  // Layers must not write into dimension 0, so it stays the constant the output relies on.
  const skipDimZero = (std: number) => (row: number, out: Float32Array) => {
    if (row === 0) out.fill(0);
    else gaussianRow(std)(row, out);
  };
  const penalty = vocab.discouraged;
  const tensors: TensorSpec[] = [
    matrix("token_embd.weight", n, vocab.tokens.length, t, (_row, out) => {
      gaussianRow(1)(_row, out);
      out[0] = 1;
    }),
  ];
  for (let l = 0; l < shape.layers; l++) {
    const p = `blk.${l}`;
    tensors.push(
      ones(`${p}.attn_norm.weight`, n),
      matrix(`${p}.attn_q.weight`, n, n, t, gaussianRow(1 / Math.sqrt(n))),
      matrix(`${p}.attn_k.weight`, n, kvDim, t, gaussianRow(1 / Math.sqrt(n))),
      matrix(`${p}.attn_v.weight`, n, kvDim, t, gaussianRow(1 / Math.sqrt(n))),
      matrix(`${p}.attn_output.weight`, n, n, t, skipDimZero(0.5 / Math.sqrt(n))),
      ...(architecture === "qwen3" ? [ones(`${p}.attn_q_norm.weight`, headDim), ones(`${p}.attn_k_norm.weight`, headDim)] : []),
      ones(`${p}.ffn_norm.weight`, n),
      matrix(`${p}.ffn_gate.weight`, n, shape.feedForward, t, gaussianRow(1 / Math.sqrt(n))),
      matrix(`${p}.ffn_up.weight`, n, shape.feedForward, t, gaussianRow(1 / Math.sqrt(n))),
      matrix(`${p}.ffn_down.weight`, shape.feedForward, n, t, skipDimZero(0.5 / Math.sqrt(shape.feedForward))),
    );
  }
  tensors.push(
    ones("output_norm.weight", n),
    matrix("output.weight", n, vocab.tokens.length, t, (row, out) => {
      gaussianRow(0.3)(row, out);
      out[0] = row === vocab.eosId ? shape.endOfTurnBias : penalty.has(row) ? -20 : 0;
    }),
  );
  return tensors;
}

/** GGUF's tokenizer keys: SentencePiece-style for a generated vocabulary, byte-level BPE for cl100k. */
function tokenizerMetadata(vocab: Vocab | BpeVocab): Record<string, MetadataValue> {
  if ("merges" in vocab) {
    return {
      "tokenizer.ggml.model": { type: "string", value: "gpt2" },
      "tokenizer.ggml.pre": { type: "string", value: vocab.pre },
      "tokenizer.ggml.tokens": { type: "string[]", value: vocab.tokens },
      "tokenizer.ggml.token_type": { type: "i32[]", value: vocab.types },
      "tokenizer.ggml.merges": { type: "string[]", value: vocab.merges },
    };
  }
  return {
    "tokenizer.ggml.model": { type: "string", value: "llama" },
    "tokenizer.ggml.tokens": { type: "string[]", value: vocab.tokens },
    "tokenizer.ggml.scores": { type: "f32[]", value: vocab.scores },
    "tokenizer.ggml.token_type": { type: "i32[]", value: vocab.types },
    "tokenizer.ggml.unknown_token_id": { type: "u32", value: vocab.unkId },
  };
}

/** The architecture's hyperparameters, under its own prefix (llama.cpp reads `<architecture>.context_length` and so on). */
export function architectureMetadata(
  architecture: RandomArchitecture,
  shape: RandomModelShape,
  vocabSize: number,
): Record<string, MetadataValue> {
  const headDim = shape.embedding / shape.heads;
  const a = architecture;
  return {
    "general.architecture": { type: "string", value: a },
    "general.file_type": { type: "u32", value: shape.matrixType === GgmlType.Q8_0 ? 7 : 0 },
    "general.alignment": { type: "u32", value: 32 },
    [`${a}.context_length`]: { type: "u32", value: shape.contextLength },
    [`${a}.embedding_length`]: { type: "u32", value: shape.embedding },
    [`${a}.block_count`]: { type: "u32", value: shape.layers },
    [`${a}.feed_forward_length`]: { type: "u32", value: shape.feedForward },
    [`${a}.rope.dimension_count`]: { type: "u32", value: headDim },
    [`${a}.attention.head_count`]: { type: "u32", value: shape.heads },
    [`${a}.attention.head_count_kv`]: { type: "u32", value: shape.kvHeads },
    [`${a}.attention.key_length`]: { type: "u32", value: headDim },
    [`${a}.attention.value_length`]: { type: "u32", value: headDim },
    [`${a}.attention.layer_norm_rms_epsilon`]: { type: "f32", value: 1e-5 },
    [`${a}.rope.freq_base`]: { type: "f32", value: 10000 },
    [`${a}.vocab_size`]: { type: "u32", value: vocabSize },
  };
}

export function randomModelMetadata(shape: RandomModelShape, vocab: Vocab): Record<string, MetadataValue> {
  return {
    ...architectureMetadata("llama", shape, vocab.tokens.length),
    "general.name": { type: "string", value: shape.name },
    ...tokenizerMetadata(vocab),
    "tokenizer.ggml.bos_token_id": { type: "u32", value: vocab.bosId },
    "tokenizer.ggml.eos_token_id": { type: "u32", value: vocab.eosId },
    "tokenizer.ggml.eot_token_id": { type: "u32", value: vocab.eosId },
    "tokenizer.ggml.padding_token_id": { type: "u32", value: vocab.unkId },
    "tokenizer.ggml.add_bos_token": { type: "bool", value: false },
    "tokenizer.ggml.add_eos_token": { type: "bool", value: false },
    "tokenizer.chat_template": { type: "string", value: CHATML_TEMPLATE },
  };
}

/** Writes a deterministic random llama-architecture GGUF model to `path`. */
export function writeRandomModel(path: string, shape: RandomModelShape, seed = 42): void {
  const vocab = shape.tokenizer === "cl100k" ? buildCl100kVocab() : buildVocab(shape.vocabSize);
  writeGguf(path, randomModelMetadata(shape, vocab), randomModelTensors(shape, vocab, seed));
}

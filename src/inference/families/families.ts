// The model families people run, as random-weight test models carry them: each family's real
// tokenizer (a vocabulary GGUF from llama.cpp's source, or a tiktoken vocabulary), its real chat
// template, and the architecture node-llama-cpp chooses the family's chat wrapper by
// (inference/families/family-model.ts builds them; docs/models.md has the table).

/** A vocabulary as GGUF's tokenizer keys (tokenizer.ggml.*, without the prefix). */
export type TokenizerKeys = Record<string, unknown>;

/** GGUF token types (llama.cpp's llama_token_type). */
export const TokenType = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, USER_DEFINED: 4, UNUSED: 5, BYTE: 6 } as const;

export interface Family {
  /** What `--family` and `--model tiny-<name>` take. */
  name: string;
  /** The real models it stands for. */
  standsFor: string;
  /** A vocabulary GGUF under llama.cpp's models/, or a tiktoken vocabulary. */
  vocabulary: { gguf: string } | { tiktoken: "o200k_harmony" };
  /** The chat template under llama.cpp's models/templates/. */
  template: string;
  /** GGUF architecture: node-llama-cpp's Qwen wrapper is chosen only for qwen2/qwen3 models. */
  architecture: "llama" | "qwen2" | "qwen3";
  /** general.name, as the real model's GGUF has it. */
  generalName: string;
  /** Tokens the vocabulary file lacks and the real model has, by id (the file's padding there). */
  added?: Readonly<Record<number, readonly [text: string, type: number]>>;
  /** The tokens the GGUF names: begin of text, end of generation (eos), end of turn (eot). */
  bos: string;
  eos: string;
  eot?: string;
  addBos: boolean;
  /** The chat wrapper node-llama-cpp picks for the model (tested in test/engine/family-models.test.ts). */
  wrapper: string;
  /** Thinking: how the family marks a thought. */
  thinking: string;
  /** How the family writes a tool call. */
  toolCalls: string;
}

const u = TokenType.USER_DEFINED;
const c = TokenType.CONTROL;

/** Qwen2.5's added tokens from <|quad_start|> on, which Qwen3 and DeepSeek-R1's distillation into Qwen2.5 keep at the same ids. */
const QWEN_VISION_AND_CODE: Record<number, readonly [string, number]> = {
  151650: ["<|quad_start|>", c],
  151651: ["<|quad_end|>", c],
  151652: ["<|vision_start|>", c],
  151653: ["<|vision_end|>", c],
  151654: ["<|vision_pad|>", c],
  151655: ["<|image_pad|>", c],
  151656: ["<|video_pad|>", c],
  151657: ["<tool_call>", u],
  151658: ["</tool_call>", u],
  151659: ["<|fim_prefix|>", u],
  151660: ["<|fim_middle|>", u],
  151661: ["<|fim_suffix|>", u],
  151662: ["<|fim_pad|>", u],
  151663: ["<|repo_name|>", u],
  151664: ["<|file_sep|>", u],
};

/** Qwen3's added tokens (its tokenizer_config.json's added_tokens), past the Qwen2 vocabulary file's. */
const QWEN3_ADDED: Record<number, readonly [string, number]> = {
  151646: ["<|object_ref_start|>", c],
  151647: ["<|object_ref_end|>", c],
  151648: ["<|box_start|>", c],
  151649: ["<|box_end|>", c],
  ...QWEN_VISION_AND_CODE,
  151665: ["<tool_response>", u],
  151666: ["</tool_response>", u],
  151667: ["<think>", u],
  151668: ["</think>", u],
};

/** DeepSeek-R1's distillation into Qwen2.5 renames Qwen's specials and adds its own. */
const DEEPSEEK_R1_QWEN_ADDED: Record<number, readonly [string, number]> = {
  151643: ["<｜end▁of▁sentence｜>", c],
  151644: ["<｜User｜>", u],
  151645: ["<｜Assistant｜>", u],
  151646: ["<｜begin▁of▁sentence｜>", c],
  151647: ["<|EOT|>", u],
  151648: ["<think>", u],
  151649: ["</think>", u],
  ...QWEN_VISION_AND_CODE,
};

/** DeepSeek V3's added tokens, in the padding of DeepSeek LLM's vocabulary that stands for V3's (ids differ from the real model's; the texts are its). */
const DEEPSEEK_V3_ADDED: Record<number, readonly [string, number]> = Object.fromEntries(
  [
    "<｜User｜>",
    "<｜Assistant｜>",
    "<think>",
    "</think>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁outputs▁begin｜>",
    "<｜tool▁outputs▁end｜>",
    "<｜tool▁output▁begin｜>",
    "<｜tool▁output▁end｜>",
  ].map((text, i) => [100015 + i, [text, u] as const]),
);

/** Mistral's control tokens, past the SentencePiece vocabulary that stands for Tekken (ids differ from the real model's; the texts are its). */
const MISTRAL_CONTROLS: Record<number, readonly [string, number]> = Object.fromEntries(
  [
    "[INST]",
    "[/INST]",
    "[TOOL_CALLS]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
    "[ARGS]",
    "[CALL_ID]",
    "[IMG]",
    "[THINK]",
    "[/THINK]",
  ].map((text, i) => [32000 + i, [text, c] as const]),
);

export const FAMILIES: readonly Family[] = [
  {
    name: "qwen3",
    standsFor: "Qwen3 (0.6B-235B)",
    vocabulary: { gguf: "models/ggml-vocab-qwen2.gguf" },
    template: "models/templates/Qwen-Qwen3-0.6B.jinja",
    architecture: "qwen3",
    generalName: "Qwen3 0.6B",
    added: QWEN3_ADDED,
    bos: "<|endoftext|>",
    eos: "<|im_end|>",
    addBos: false,
    wrapper: "QwenChatWrapper",
    thinking: "<think>…</think>",
    toolCalls: "<tool_call>{json}</tool_call>",
  },
  {
    name: "qwen3-coder",
    standsFor: "Qwen3-Coder (30B-A3B, 480B-A35B)",
    vocabulary: { gguf: "models/ggml-vocab-qwen2.gguf" },
    template: "models/templates/Qwen3-Coder.jinja",
    architecture: "qwen3",
    generalName: "Qwen3 Coder 30B A3B Instruct",
    added: QWEN3_ADDED,
    bos: "<|endoftext|>",
    eos: "<|im_end|>",
    addBos: false,
    wrapper: "JinjaTemplateChatWrapper",
    thinking: "none",
    toolCalls: "<tool_call><function=…><parameter=…> (XML)",
  },
  {
    name: "deepseek-r1",
    standsFor: "DeepSeek-R1-Distill-Qwen (1.5B-32B)",
    vocabulary: { gguf: "models/ggml-vocab-qwen2.gguf" },
    template: "models/templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
    architecture: "qwen2",
    generalName: "DeepSeek R1 Distill Qwen 1.5B",
    added: DEEPSEEK_R1_QWEN_ADDED,
    bos: "<｜begin▁of▁sentence｜>",
    eos: "<｜end▁of▁sentence｜>",
    addBos: true,
    wrapper: "DeepSeekChatWrapper",
    thinking: "<think>…</think>",
    toolCalls: "<function=name>{…}</function> (node-llama-cpp's, for the distillations)",
  },
  {
    name: "deepseek-v3.1",
    standsFor: "DeepSeek V3.1 (V3's tokenizer stood for by DeepSeek LLM's BPE vocabulary, V3's added tokens in it)",
    vocabulary: { gguf: "models/ggml-vocab-deepseek-llm.gguf" },
    template: "models/templates/deepseek-ai-DeepSeek-V3.1.jinja",
    architecture: "llama",
    generalName: "DeepSeek V3.1",
    added: DEEPSEEK_V3_ADDED,
    bos: "<｜begin▁of▁sentence｜>",
    eos: "<｜end▁of▁sentence｜>",
    addBos: true,
    wrapper: "JinjaTemplateChatWrapper",
    thinking: "<think>…</think>",
    toolCalls: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>name<｜tool▁sep｜>{…}<｜tool▁call▁end｜>…",
  },
  {
    name: "llama3.1",
    standsFor: "Llama 3.1, 3.3 (8B, 70B)",
    vocabulary: { gguf: "models/ggml-vocab-llama-bpe.gguf" },
    template: "models/templates/meta-llama-Llama-3.1-8B-Instruct.jinja",
    architecture: "llama",
    generalName: "Meta Llama 3.1 8B Instruct",
    // Llama 3's reserved ids that 3.1 names.
    added: { 128008: ["<|eom_id|>", c], 128010: ["<|python_tag|>", c] },
    bos: "<|begin_of_text|>",
    eos: "<|eot_id|>",
    addBos: true,
    wrapper: "Llama3_1ChatWrapper",
    thinking: "none",
    toolCalls: '{"name": …, "parameters": …}',
  },
  {
    name: "gemma4",
    standsFor: "Gemma 4",
    vocabulary: { gguf: "models/ggml-vocab-gemma-4.gguf" },
    template: "models/templates/google-gemma-4-31B-it.jinja",
    architecture: "llama",
    generalName: "Gemma 4 31B It",
    bos: "<bos>",
    eos: "<eos>",
    eot: "<turn|>",
    addBos: true,
    wrapper: "Gemma4ChatWrapper",
    thinking: "<|channel>thought…<channel|>",
    toolCalls: "<|tool_call>call:name{…}<tool_call|>",
  },
  {
    name: "gpt-oss",
    standsFor: "gpt-oss (20B, 120B)",
    vocabulary: { tiktoken: "o200k_harmony" },
    template: "models/templates/openai-gpt-oss-120b.jinja",
    architecture: "llama",
    generalName: "Gpt Oss 20b",
    bos: "<|startoftext|>",
    eos: "<|return|>",
    addBos: false,
    wrapper: "HarmonyChatWrapper",
    thinking: "<|channel|>analysis<|message|>…<|end|>",
    toolCalls: "<|channel|>commentary to=functions.name <|constrain|>json<|message|>{…}<|call|>",
  },
  {
    name: "mistral",
    standsFor: "Mistral Small 3.2, Devstral (Mistral's v3 tokenizer stood for by v1's SentencePiece vocabulary)",
    vocabulary: { gguf: "models/ggml-vocab-llama-spm.gguf" },
    template: "models/templates/Mistral-Small-3.2-24B-Instruct-2506.jinja",
    architecture: "llama",
    generalName: "Mistral Small 3.2 24B Instruct 2506",
    added: MISTRAL_CONTROLS,
    bos: "<s>",
    eos: "</s>",
    addBos: true,
    wrapper: "JinjaTemplateChatWrapper",
    thinking: "none",
    toolCalls: "[TOOL_CALLS]name[ARGS]{…}",
  },
];

export const familyNames = (): string[] => FAMILIES.map((f) => f.name);

export function familyNamed(name: string): Family | undefined {
  return FAMILIES.find((f) => f.name === name);
}

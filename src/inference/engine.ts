// What the scheduler needs from a model, and what a turn or a dream asks of the scheduler.
// LlamaEngine is the real engine; tests of pure logic may script one, never the end-to-end path.
import type { GeneratedToolCall, ToolCall, ToolChoice, ToolSpec } from "../tools/types.js";
import type { ResponseFormat } from "../tools/response-format.js";

export interface PromptMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** An assistant message's calls (arguments as JSON text). */
  toolCalls?: readonly ToolCall[] | undefined;
  /** A tool message: the call it answers. */
  toolCallId?: string | undefined;
}

/** A text completion's prompt: read as it is, no chat template (POST /v1/completions). */
export interface TextPrompt {
  prompt: string;
  /** The text the completion leads into (fill-in-the-middle, where the model has the tokens for it). */
  suffix?: string | undefined;
}

export interface GenerateRequest {
  messages: readonly PromptMessage[];
  /** A text completion instead of a chat: `messages` are ignored, and so are tools, formats and thoughts. */
  text?: TextPrompt | undefined;
  /** Text already produced for this reply (a retried turn continues from it). */
  partialResponse?: string;
  maxTokens: number;
  /** OpenAI semantics: default 1. */
  temperature?: number | undefined;
  topP?: number | undefined;
  /** Sample from the k likeliest tokens; 0 or unset: no limit. */
  topK?: number | undefined;
  seed?: number | undefined;
  stop?: readonly string[];
  /** Aborting stops generation at the next token; the partial text is returned. */
  signal?: AbortSignal;
  /** Called with each piece of decoded text, in order, and the tokens generated since the last call. */
  onText?: (text: string, tokens: number) => void;
  /** Called with each piece of the model's thought (a reasoning family's, as its chat wrapper marks it), as onText is with the reply. */
  onReasoning?: (text: string, tokens: number) => void;
  /** Function tools the model may call (never executed by the engine). */
  tools?: readonly ToolSpec[] | undefined;
  /** Default "auto" when tools are given. */
  toolChoice?: ToolChoice | undefined;
  /** false: at most one call per reply. */
  parallelToolCalls?: boolean | undefined;
  /** OpenAI semantics: subtracted from a token's logit once it has appeared / per appearance. */
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  /** Token id -> bias added to its logit; -100 bans the token. */
  logitBias?: Readonly<Record<string, number>> | undefined;
  /** The reply must be JSON (of this schema): generation is held to it by a grammar. Not with tools. */
  responseFormat?: ResponseFormat | undefined;
  /** The most tokens the thought may take (0: thinking off, by the family's switch where it has one); unset: the family's default. */
  thoughtBudget?: number | undefined;
  /** The effort the client asked for, where the family renders one in its prompt (gpt-oss's Harmony "Reasoning: low"); unset: its default. */
  reasoningEffort?: ReasoningEffort | undefined;
  /** Which context sequence: dreams have their own, so they neither see nor evict a chat's cache. */
  sequence?: "chat" | "dream" | undefined;
  /**
   * The conversation the prompt is of. A slot's state is written out (--prompt-cache-mb) before
   * another conversation's prompt replaces it, not when its own conversation's next turn moves
   * past it: what that turn does not share is its own older rendering, never asked for again.
   */
  conversation?: string | undefined;
}

export type GenerateFinish = "stop" | "length" | "cancelled" | "tool_calls";

export interface GenerateResult {
  /** The new text (not including `partialResponse`). */
  text: string;
  /** The model's thought, apart from the text; empty where it had none. */
  reasoning?: string | undefined;
  /** Of the completion tokens, those of the thought. */
  reasoningTokens?: number | undefined;
  finishReason: GenerateFinish;
  promptTokens: number;
  /** Of the prompt's tokens, how many the model had already read (its slot held them), where the engine knows. */
  cachedTokens?: number | undefined;
  completionTokens: number;
  /** Calls the model made, in order; finishReason is "tool_calls" when there are any. */
  toolCalls: GeneratedToolCall[];
}

/** The model as a client's model list describes it (Ollama's /api/show), read from its GGUF (inference/model-description.ts). */
export interface ModelDescription {
  /** The GGUF's architecture (qwen3, llama, gemma3…): Ollama's family. */
  architecture: string;
  /** Its size as its makers label it ("0.6B"), or as llama.cpp counts it. */
  parameterSize: string;
  /** The weights' type ("Q4_K_M", "F16"). */
  quantization: string;
  /** The file's size in bytes. */
  bytes: number;
  /** Tokens of context the server gives a conversation. */
  contextLength: number;
  /** The chat template in the GGUF; empty where it has none. */
  template: string;
  /** Whether its chat wrapper marks thoughts. */
  thinks: boolean;
  /** Whether it has fill-in-the-middle tokens. */
  fillInMiddle: boolean;
  /** The GGUF's metadata keys and values (scalars only), as Ollama's model_info. */
  info: Record<string, string | number | boolean>;
}

/** A request's prompt as the model will read it, rendered once (inference/scheduler.ts chooses its slot by its tokens). */
export interface RenderedPrompt {
  readonly tokens: readonly number[];
}

/** A slot's phase while a generation holds it, as the engine tells it (inference/scheduler.ts keeps the states). */
export type SlotPhase = "saving" | "loading" | "reading" | "generating";

/**
 * What the scheduler (inference/scheduler.ts) needs of a model: sequences to generate in, the
 * tokens each holds, and a prompt's rendering. Slots 0 .. slots-1 are the chats'; slot `slots`
 * is the reverie's, so that a dream never evicts a conversation's prefix. The engine decides
 * nothing about who generates when: it generates where it is told.
 */
export interface InferenceEngine {
  /** A name for the loaded model (its file name or URI). */
  readonly modelName: string;
  /** Tokens of context per conversation, where known. */
  readonly contextSize?: number | undefined;
  /** Whether the model has a thinking channel (its chat wrapper marks thoughts), where known. */
  readonly thinks?: boolean | undefined;
  /** The model as clients' model lists describe it, where the engine knows (inference/model-description.ts). */
  describe?(): ModelDescription;
  /**
   * A turn is being taken in by the JavaScript thread of the engine's process until the returned
   * call, where the engine leaves that thread a core meanwhile (inference/core-share.ts).
   */
  takingIn?(): () => void;
  /** Chat slots: chats it generates at once. */
  readonly slots: number;
  /** The tokens slot `slot` holds now (empty where the engine keeps none). */
  cachedTokens(slot: number): readonly number[];
  /** The request's prompt as the model will read it. */
  render(request: GenerateRequest): RenderedPrompt;
  /**
   * What taking a slot holding `cached` is worth to `prompt`, where the engine knows more than
   * the tokens a slot shares with it (kept prompts it can load: inference/slots.ts keptSlotScore).
   */
  slotWorth?(prompt: RenderedPrompt): ((cached: readonly number[]) => number) | undefined;
  /**
   * Readies `slot` for `prompt` before it is read: keeps on disk what the slot would lose, and
   * loads a kept prompt that holds more of it (phases `saving`, `loading`).
   */
  prepare?(slot: number, prompt: RenderedPrompt, conversation: string | undefined, phase: (phase: SlotPhase) => void): Promise<void>;
  /** Generates `request` in `slot`, its prompt `prompt` (phases `reading`, then `generating` from its first token). */
  generateIn(slot: number, prompt: RenderedPrompt, request: GenerateRequest, phase: (phase: SlotPhase) => void): Promise<GenerateResult>;
  /** Tokens `text` takes in this model's vocabulary (for prompt budgets). */
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

/** What generates a reply: the scheduler, over the engine (conversation/run-turn.ts and dreams/dream.ts ask it). */
export interface Generator {
  readonly modelName: string;
  readonly contextSize?: number | undefined;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  countTokens(text: string): number;
}

/** A reasoning effort as the families that render one name it (gpt-oss's template's reasoning_effort). */
export type ReasoningEffort = "low" | "medium" | "high";

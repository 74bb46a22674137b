// What the worker needs from a model. LlamaEngine is the real one; tests of pure logic may
// script one, never the end-to-end path.
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

export interface GenerateRequest {
  messages: readonly PromptMessage[];
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
  finishReason: GenerateFinish;
  promptTokens: number;
  /** Of the prompt's tokens, how many the model had already read (its slot held them), where the engine knows. */
  cachedTokens?: number | undefined;
  completionTokens: number;
  /** Calls the model made, in order; finishReason is "tool_calls" when there are any. */
  toolCalls: GeneratedToolCall[];
}

export interface InferenceEngine {
  /** A name for the loaded model (its file name or URI). */
  readonly modelName: string;
  /** Tokens of context per conversation, where known. */
  readonly contextSize?: number | undefined;
  /** Chats it generates at once (its slots); unset: one at a time. */
  readonly parallel?: number | undefined;
  /**
   * Whether a chat's generate() called while every slot is busy waits its turn for one (first
   * come, first served; its signal ends the wait). The worker then takes chats ahead of the
   * slots, so that their bookkeeping is done while the slots generate.
   */
  readonly waitsForSlot?: boolean | undefined;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** Tokens `text` takes in this model's vocabulary (for prompt budgets). */
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

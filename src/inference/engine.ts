// What the worker needs from a model. LlamaEngine is the real one; tests of pure logic may
// script one, never the end-to-end path.

export interface PromptMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface GenerateRequest {
  messages: readonly PromptMessage[];
  /** Text already produced for this reply (a retried turn continues from it). */
  partialResponse?: string;
  maxTokens: number;
  /** OpenAI semantics: default 1. */
  temperature?: number | undefined;
  topP?: number | undefined;
  seed?: number | undefined;
  stop?: readonly string[];
  /** Aborting stops generation at the next token; the partial text is returned. */
  signal?: AbortSignal;
  /** Called with each piece of decoded text, in order, and the tokens generated since the last call. */
  onText?: (text: string, tokens: number) => void;
}

export type GenerateFinish = "stop" | "length" | "cancelled";

export interface GenerateResult {
  /** The new text (not including `partialResponse`). */
  text: string;
  finishReason: GenerateFinish;
  promptTokens: number;
  completionTokens: number;
}

export interface InferenceEngine {
  /** A name for the loaded model (its file name or URI). */
  readonly modelName: string;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** Tokens `text` takes in this model's vocabulary (for prompt budgets). */
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

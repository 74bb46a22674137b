// InferenceEngine on node-llama-cpp. One context with several sequences; chat turns use
// the chat sequence, so the next turn of a conversation reuses its evaluated prefix.
import {
  type ChatHistoryItem,
  type ChatWrapper,
  type Llama,
  LlamaChat,
  type LlamaContext,
  type LlamaModel,
  resolveChatWrapper,
} from "node-llama-cpp";
import type { GenerateRequest, GenerateResult, InferenceEngine, PromptMessage } from "./engine.js";

export interface LlamaEngineOptions {
  llama: Llama;
  model: LlamaModel;
  modelName: string;
  /** CPU threads. */
  threads: number;
  /** Tokens per sequence. */
  contextSize: number;
  /** Sequences in the context (chat, dreams, ...). Default 2. */
  sequences?: number;
}

export function toChatHistory(messages: readonly PromptMessage[], partialResponse = ""): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((m): ChatHistoryItem => {
    switch (m.role) {
      case "system":
        return { type: "system", text: m.content };
      case "user":
        return { type: "user", text: m.content };
      case "assistant":
        return { type: "model", response: [m.content] };
      default:
        return m.role satisfies never;
    }
  });
  history.push({ type: "model", response: partialResponse ? [partialResponse] : [] });
  return history;
}

export class LlamaEngine implements InferenceEngine {
  readonly modelName: string;
  private readonly chatWrapper: ChatWrapper;
  private chat: LlamaChat | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly options: LlamaEngineOptions,
    private readonly context: LlamaContext,
  ) {
    this.modelName = options.modelName;
    // Resolved once per model: auto-detection costs hundreds of ms of blocking CPU per call
    // (shared/notes/node-llama-cpp.md).
    this.chatWrapper = resolveChatWrapper(options.model) ?? resolveChatWrapper({ type: "chatML" });
  }

  static async create(options: LlamaEngineOptions): Promise<LlamaEngine> {
    const context = await options.model.createContext({
      contextSize: options.contextSize,
      sequences: options.sequences ?? 2,
      threads: options.threads,
    });
    return new LlamaEngine(options, context);
  }

  get tokenizer() {
    return this.options.model.tokenizer;
  }

  private chatSession(): LlamaChat {
    this.chat ??= new LlamaChat({ contextSequence: this.context.getSequence(), chatWrapper: this.chatWrapper });
    return this.chat;
  }

  countTokens(text: string): number {
    return this.options.model.tokenize(text).length;
  }

  /** Counts the prompt's tokens as the chat wrapper renders it. */
  countPromptTokens(history: ChatHistoryItem[]): number {
    const { contextText } = this.chatWrapper.generateContextState({ chatHistory: history });
    return contextText.tokenize(this.options.model.tokenizer).length;
  }

  generate(request: GenerateRequest): Promise<GenerateResult> {
    // One generation at a time on the chat sequence.
    const run = this.queue.then(() => this.generateNow(request));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async generateNow(request: GenerateRequest): Promise<GenerateResult> {
    const history = toChatHistory(request.messages, request.partialResponse);
    const promptTokens = this.countPromptTokens(history);
    let completionTokens = 0;
    let unreported = 0;
    let text = "";
    if (request.signal?.aborted) return { text, finishReason: "cancelled", promptTokens, completionTokens };
    const result = await this.chatSession().generateResponse(history, {
      maxTokens: request.maxTokens,
      temperature: request.temperature ?? 1,
      topP: request.topP ?? undefined,
      seed: request.seed ?? undefined,
      customStopTriggers: request.stop?.length ? [...request.stop] : undefined,
      signal: request.signal,
      stopOnAbortSignal: true,
      onToken: (tokens) => {
        completionTokens += tokens.length;
        unreported += tokens.length;
      },
      onTextChunk: (chunk) => {
        text += chunk;
        request.onText?.(chunk, unreported);
        unreported = 0;
      },
    });
    const reason = result.metadata.stopReason;
    const finishReason =
      reason === "maxTokens" ? "length" : reason === "abort" || request.signal?.aborted ? "cancelled" : "stop";
    return { text, finishReason, promptTokens, completionTokens };
  }

  async dispose(): Promise<void> {
    await this.queue;
    this.chat?.dispose();
    await this.context.dispose();
    await this.options.model.dispose();
  }
}

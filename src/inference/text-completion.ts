// A text completion in a chat slot's sequence: the prompt as it is, no chat template, no
// persona (POST /v1/completions, conversation/run-turn.ts). node-llama-cpp's LlamaCompletion
// over the slot's own sequence, so that the slot's tokens stay what the scheduler sees
// (inference/slots.ts); with a suffix, the family's fill-in-the-middle tokens.
import { LlamaCompletion, type LlamaContextSequence, type LlamaModel, type Token } from "node-llama-cpp";
import type { GenerateRequest, GenerateResult, SlotPhase, TextPrompt } from "./engine.js";

/**
 * The prompt's tokens as the sequence will hold them, near enough for choosing a slot and
 * counting: the model's BOS where it wants one and special tokens read as such; with a suffix,
 * the fill-in-the-middle tokens around prefix and suffix (node-llama-cpp's LlamaCompletion
 * orders them as the model's vocabulary says).
 */
export function textTokens(model: LlamaModel, text: TextPrompt): Token[] {
  const bos = model.tokens.shouldPrependBosToken && model.tokens.bos !== null ? [model.tokens.bos] : [];
  const { prefix, suffix, middle } = model.tokens.infill;
  if (text.suffix === undefined || prefix === null || suffix === null || middle === null)
    return [...bos, ...model.tokenize(text.prompt, true)];
  return [prefix, ...model.tokenize(text.prompt, true), suffix, ...model.tokenize(text.suffix, true), middle];
}

/** Whether the model has fill-in-the-middle tokens (a suffix can be completed into). */
export const fillsInMiddle = (model: LlamaModel) =>
  model.tokens.infill.prefix !== null && model.tokens.infill.suffix !== null && model.tokens.infill.middle !== null;

export interface CompleteOptions {
  model: LlamaModel;
  sequence: LlamaContextSequence;
  maxTokens: number;
  /** Repeat penalties and token biases, as the chat's (LlamaEngine.sampling). */
  sampling: object;
  phase: (phase: SlotPhase) => void;
  promptTokens: number;
  cachedTokens: number;
}

export async function completeText(text: TextPrompt, request: GenerateRequest, o: CompleteOptions): Promise<GenerateResult> {
  if (text.suffix !== undefined && !fillsInMiddle(o.model))
    throw new Error("this model has no fill-in-the-middle tokens: a suffix cannot be completed into");
  const completion = new LlamaCompletion({ contextSequence: o.sequence, autoDisposeSequence: false });
  let completionTokens = 0;
  let unreported = 0;
  let generated = "";
  let read = false;
  const options = {
    ...o.sampling,
    maxTokens: o.maxTokens,
    temperature: request.temperature ?? 1,
    topP: request.topP ?? undefined,
    topK: request.topK || undefined,
    seed: request.seed ?? undefined,
    customStopTriggers: request.stop?.length ? [...request.stop] : undefined,
    signal: request.signal,
    stopOnAbortSignal: true,
    onToken: (tokens: Token[]) => {
      if (!read) {
        read = true;
        o.phase("generating");
      }
      completionTokens += tokens.length;
      unreported += tokens.length;
    },
    onTextChunk: (chunk: string) => {
      generated += chunk;
      request.onText?.(chunk, unreported);
      unreported = 0;
    },
  };
  try {
    const prompt = o.model.tokenize(text.prompt, true);
    const { response, metadata } =
      text.suffix !== undefined
        ? await completion.generateInfillCompletionWithMeta(prompt, o.model.tokenize(text.suffix, true), options)
        : await completion.generateCompletionWithMeta(prompt, options);
    // Text held back as a possible stop sequence's start and then released comes only in the response.
    if (response.length > generated.length && response.startsWith(generated))
      request.onText?.(response.slice(generated.length), unreported);
    const reason = metadata.stopReason;
    if (reason === "maxTokens") completionTokens = Math.max(completionTokens, o.maxTokens);
    return {
      text: response,
      finishReason: reason === "maxTokens" ? "length" : reason === "abort" || request.signal?.aborted ? "cancelled" : "stop",
      promptTokens: o.promptTokens,
      cachedTokens: o.cachedTokens,
      completionTokens,
      toolCalls: [],
    };
  } finally {
    completion.dispose({ disposeSequence: false });
  }
}

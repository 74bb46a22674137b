// A turn as the chat API's objects: the chat.completion of a finished turn, and the pieces of
// its chat.completion.chunk stream (http/chat/stream.ts).
import type { FinishReason, Turn } from "../../db/sql/turns.js";
import { replyReport, toolCallsJson } from "../tools.js";

export interface ChunkBase {
  id: string;
  created: number;
  model: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens the model had already read (its slot held them), where known. */
  prompt_tokens_details?: { cached_tokens: number };
  /** Of the completion tokens, the thought's (a reasoning model's). */
  completion_tokens_details?: { reasoning_tokens: number };
}

export type OpenAiFinish = "stop" | "length" | "tool_calls";

/** OpenAI has no "cancelled" finish reason; a cancelled turn ends as "stop". */
export const openAiFinish = (r: FinishReason | null): OpenAiFinish => (r === "length" || r === "tool_calls" ? r : "stop");

/** The chat API's id for a turn's completion. */
export const completionId = (turnId: string) => `chatcmpl-${turnId}`;

const chunkOf = (base: ChunkBase) => ({
  id: base.id,
  object: "chat.completion.chunk",
  created: base.created,
  model: base.model,
  system_fingerprint: null,
});

export function chunk(base: ChunkBase, delta: Record<string, unknown>, finishReason: OpenAiFinish | null = null) {
  return { ...chunkOf(base), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

/** The usage chunk: no choices (stream_options.include_usage). */
export function usageChunk(base: ChunkBase, usage: Usage) {
  return { ...chunkOf(base), choices: [], usage };
}

export const usageOf = (
  promptTokens: number | null,
  completionTokens: number | null,
  cachedTokens?: number | null,
  reasoningTokens?: number | null,
): Usage => ({
  prompt_tokens: promptTokens ?? 0,
  completion_tokens: completionTokens ?? 0,
  total_tokens: (promptTokens ?? 0) + (completionTokens ?? 0),
  ...(cachedTokens != null ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
  ...(reasoningTokens != null ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
});

/** A turn's usage, its thought's tokens among its completion's. */
export const turnUsage = (turn: Turn): Usage =>
  usageOf(turn.prompt_tokens, turn.completion_tokens, turn.cached_tokens, turn.reasoning_tokens);

/** The thought, as llama-server and DeepSeek's API return it beside the content: only where there is one. */
const reasoningOf = (turn: Turn) => (turn.reasoning ? { reasoning_content: turn.reasoning } : {});

/** A finished turn as a chat.completion; `psyche` says where it is stored, and what its reply breaks. */
export function chatCompletion(turn: Turn, base: ChunkBase) {
  return {
    id: base.id,
    object: "chat.completion",
    created: base.created,
    model: base.model,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: turn.tool_calls?.length
          ? {
              role: "assistant",
              content: turn.content || null,
              ...reasoningOf(turn),
              refusal: null,
              tool_calls: toolCallsJson(turn.tool_calls),
            }
          : { role: "assistant", content: turn.content ?? "", ...reasoningOf(turn), refusal: null },
        logprobs: null,
        finish_reason: openAiFinish(turn.finish_reason),
      },
    ],
    usage: turnUsage(turn),
    psyche: { conversation_id: turn.conversation_id, turn_id: turn.id, ...replyReport(turn) },
  };
}

// OpenAI's chat.completion.chunk stream.
import type { Context } from "hono";
import type { FinishReason } from "../db/sql/turns.js";

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
}

export type OpenAiFinish = "stop" | "length" | "tool_calls";

/** OpenAI has no "cancelled" finish reason; a cancelled turn ends as "stop". */
export const openAiFinish = (r: FinishReason | null): OpenAiFinish => (r === "length" || r === "tool_calls" ? r : "stop");

export function chunk(base: ChunkBase, delta: Record<string, unknown>, finishReason: OpenAiFinish | null = null) {
  return {
    id: base.id,
    object: "chat.completion.chunk",
    created: base.created,
    model: base.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

export function usageChunk(base: ChunkBase, usage: Usage) {
  return {
    id: base.id,
    object: "chat.completion.chunk",
    created: base.created,
    model: base.model,
    system_fingerprint: null,
    choices: [],
    usage,
  };
}

/** One SSE event; `id` lets a client resume with Last-Event-ID. */
export function sseEvent(data: unknown, id?: number): string {
  return `${id === undefined ? "" : `id: ${id}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

export const usageOf = (promptTokens: number | null, completionTokens: number | null, cachedTokens?: number | null): Usage => ({
  prompt_tokens: promptTokens ?? 0,
  completion_tokens: completionTokens ?? 0,
  total_tokens: (promptTokens ?? 0) + (completionTokens ?? 0),
  ...(cachedTokens != null ? { prompt_tokens_details: { cached_tokens: cachedTokens } } : {}),
});

/** The headers of every event stream: not cached, not buffered by a proxy. */
export function sseHeaders(c: Context): void {
  c.header("Content-Type", "text/event-stream; charset=utf-8");
  c.header("Cache-Control", "no-cache");
  c.header("X-Accel-Buffering", "no");
}

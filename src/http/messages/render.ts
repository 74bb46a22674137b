// A turn as Anthropic's Message object: its text and its tool calls as content blocks, the
// finish reason as a stop reason, and the usage.
import type { Turn } from "../../db/sql/turns.js";
import type { ToolCall } from "../../tools/types.js";

export type StopReason = "end_turn" | "max_tokens" | "tool_use" | "stop_sequence";

/** msg_ and the turn id's 32 hex digits, as Anthropic's ids look. */
export const messageId = (turnId: string) => `msg_${turnId.replace(/-/g, "")}`;

export function stopReason(finish: Turn["finish_reason"]): StopReason {
  if (finish === "length") return "max_tokens";
  if (finish === "tool_calls") return "tool_use";
  return "end_turn";
}

export function toolUseBlock(call: ToolCall) {
  let input: unknown = {};
  try {
    input = JSON.parse(call.arguments);
  } catch {
    // Checked at generation (tools/arguments.ts): a call whose arguments do not parse is sent empty.
  }
  return { type: "tool_use" as const, id: call.id, name: call.name, input };
}

/**
 * A thinking block's signature: Anthropic's is opaque and checked by its API; Psyche's says the
 * thought is Psyche's own, and which turn thought it. A client sends it back with the thought.
 */
export const thinkingSignature = (turnId: string) => `psyche.${turnId}`;

/** The content blocks: the thought where there is one, the text (even empty, when there is nothing else), then each tool call. */
export function contentBlocks(turn: Pick<Turn, "id" | "content" | "reasoning" | "finish_reason" | "tool_calls">) {
  const calls = turn.finish_reason === "tool_calls" ? (turn.tool_calls ?? []) : [];
  const text = turn.content ?? "";
  return [
    ...(turn.reasoning ? [{ type: "thinking" as const, thinking: turn.reasoning, signature: thinkingSignature(turn.id) }] : []),
    ...(text || calls.length === 0 ? [{ type: "text" as const, text }] : []),
    ...calls.map(toolUseBlock),
  ];
}

/**
 * Anthropic's usage: input_tokens are the prompt tokens read now; those the model's slot
 * already held are cache_read_input_tokens (together, the whole prompt, as Claude Code adds them).
 */
export function anthropicUsage(turn: Pick<Turn, "prompt_tokens" | "completion_tokens" | "cached_tokens">) {
  const cached = Math.min(turn.cached_tokens ?? 0, turn.prompt_tokens ?? 0);
  return {
    input_tokens: (turn.prompt_tokens ?? 0) - cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: turn.completion_tokens ?? 0,
  };
}

export function messageObject(turn: Turn, model: string) {
  return {
    id: messageId(turn.id),
    type: "message" as const,
    role: "assistant" as const,
    model,
    content: contentBlocks(turn),
    stop_reason: stopReason(turn.finish_reason),
    stop_sequence: null,
    usage: anthropicUsage(turn),
  };
}

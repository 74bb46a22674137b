// Tool calls rendered in OpenAI's shape, and what the grammar could not hold a reply to.
import type { Turn } from "../db/sql/turns.js";
import { replyProblems } from "../tools/response-format.js";
import type { ToolCall } from "../tools/types.js";

/** OpenAI's message.tool_calls. */
export function toolCallsJson(calls: readonly ToolCall[]) {
  return calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
}

/**
 * Psyche's report on a finished reply, for the response's `psyche` field: each tool call's
 * problems (by call id) and the reply's against its response_format; nothing when all is valid.
 */
export function replyReport(turn: Pick<Turn, "tool_calls" | "response_format" | "content" | "finish_reason"> | undefined): {
  tool_call_problems?: Record<string, string[]>;
  response_format_problems?: string[];
} {
  if (!turn) return {};
  const calls = turn.tool_calls ?? [];
  const formatProblems =
    turn.response_format && turn.finish_reason !== "tool_calls" && turn.finish_reason !== "cancelled"
      ? replyProblems(turn.response_format, turn.content ?? "", turn.finish_reason ?? "stop")
      : [];
  return {
    ...(calls.some((tc) => tc.problems.length) ? { tool_call_problems: Object.fromEntries(calls.map((tc) => [tc.id, tc.problems])) } : {}),
    ...(formatProblems.length ? { response_format_problems: formatProblems } : {}),
  };
}

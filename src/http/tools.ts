// Tool calls rendered in OpenAI's shape.
import type { ToolCall } from "../tools/types.js";

/** OpenAI's message.tool_calls. */
export function toolCallsJson(calls: readonly ToolCall[]) {
  return calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
}

// Which calls of a conversation's last reply still wait for their results (MCP's
// add_tool_result answers them one at a time: conversation/open-turn.ts).
import type { StoredMessage } from "../db/sql/conversations.js";

/** The calls of the transcript's last assistant message that no tool message has answered yet. */
export function openCalls(messages: readonly Pick<StoredMessage, "role" | "tool_calls" | "tool_call_id" | "id">[]): {
  assistantId: number | null;
  open: string[];
} {
  let i = messages.length - 1;
  while (i >= 0 && messages[i]!.role === "tool") i--;
  const assistant = messages[i];
  if (!assistant || assistant.role !== "assistant" || !assistant.tool_calls?.length) return { assistantId: null, open: [] };
  const answered = new Set(messages.slice(i + 1).map((m) => m.tool_call_id));
  return { assistantId: assistant.id, open: assistant.tool_calls.map((c) => c.id).filter((id) => !answered.has(id)) };
}

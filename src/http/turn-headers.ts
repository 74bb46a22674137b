// Where a reply's turn is stored, on every API's response: X-Psyche-Conversation and
// X-Psyche-Turn (docs/api.md), for a client to continue, resume or cancel it.
import type { Context } from "hono";

export function turnHeaders(c: Context, turn: { conversationId: string; turnId: string }): void {
  c.header("X-Psyche-Conversation", turn.conversationId);
  c.header("X-Psyche-Turn", turn.turnId);
}

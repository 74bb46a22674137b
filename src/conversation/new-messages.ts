// Which of a request's messages are new to a stored conversation (docs/api.md, conversations).
// A client continuing by id may send only the new messages, or (like Open WebUI) the whole
// transcript every time. Identity comes from the id, never from fingerprinting transcripts.

export interface ComparableMessage {
  role: string;
  content: string;
  /** Stored rows carry tool_calls / tool_call_id, requests toolCalls / toolCallId. */
  tool_calls?: readonly { id: string; name: string; arguments: string }[] | null | undefined;
  toolCalls?: readonly { id: string; name: string; arguments: string }[] | null | undefined;
  tool_call_id?: string | null | undefined;
  toolCallId?: string | null | undefined;
}

export interface NewMessagesDecision {
  /** Messages to append. */
  append: number;
  /** Index into the request's messages where the new ones start. */
  from: number;
  /** Stored messages from this index on are replaced (the client rewrote history). */
  supersedeFrom?: number;
}

const calls = (m: ComparableMessage) => JSON.stringify((m.tool_calls ?? m.toolCalls ?? []).map((c) => [c.id, c.name, c.arguments]));
const callId = (m: ComparableMessage) => m.tool_call_id ?? m.toolCallId ?? null;
const same = (a: ComparableMessage, b: ComparableMessage) =>
  a.role === b.role && a.content === b.content && callId(a) === callId(b) && calls(a) === calls(b);

/**
 * - Nothing stored: every message is new.
 * - The request has more than one message and opens with the stored opening: it is the whole
 *   transcript. What matches the stored transcript is kept; what follows is new; stored
 *   messages past the point where the two differ are superseded (an edit or a regenerate).
 * - Otherwise the request holds only new messages, appended.
 */
export function decideNewMessages(stored: readonly ComparableMessage[], sent: readonly ComparableMessage[]): NewMessagesDecision {
  const first = stored[0];
  const opening = sent[0];
  if (!first || !opening || sent.length < 2 || !same(first, opening)) return { append: sent.length, from: 0 };
  let k = 0;
  while (k < stored.length && k < sent.length && same(stored[k]!, sent[k]!)) k++;
  const decision: NewMessagesDecision = { append: sent.length - k, from: k };
  if (k < stored.length) decision.supersedeFrom = k;
  return decision;
}

/**
 * A continuation from a known point (the Responses API's previous_response_id): every sent
 * message is new, and stored messages after position `after` are superseded (a branch).
 */
export function continueAfter(stored: readonly { position: number }[], after: number, sent: number): NewMessagesDecision {
  const k = stored.findIndex((m) => m.position > after);
  return k === -1 ? { append: sent, from: 0 } : { append: sent, from: 0, supersedeFrom: k };
}

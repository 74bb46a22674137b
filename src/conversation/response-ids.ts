// A response is a turn: its id is the turn's, in OpenAI's form (resp_ and 32 hex digits).
export const responseId = (turnId: string) => `resp_${turnId.replace(/-/g, "")}`;

export function turnIdOf(responseId: string): string {
  const h = responseId.slice("resp_".length);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The reply's message item: one per response, so its id follows from the turn's. */
export const messageItemId = (turnId: string) => `msg_${turnId.replace(/-/g, "")}`;

/** A function_call item's id, from its call id (call_ and 24 characters, run-turn.ts). */
export const functionCallItemId = (callId: string) => `fc_${callId.replace(/^call_/, "")}`;

/** The reply's reasoning item (a reasoning model's thought): one per response, as its message is. */
export const reasoningItemId = (turnId: string) => `rs_${turnId.replace(/-/g, "")}`;

// A transcript with tool messages must make sense before it is stored: every tool message
// answers a call that an assistant message before it made, once.
import { UserError, type UserErrorOptions } from "../errors.js";

export class TranscriptError extends UserError {
  override name = "TranscriptError";
  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { param: "messages", code: "invalid_tool_message", ...opts });
  }
}

export interface TranscriptMessage {
  role: string;
  toolCalls?: readonly { id: string }[] | null | undefined;
  toolCallId?: string | null | undefined;
}

/** Throws a TranscriptError naming the first tool message that answers no call. */
export function checkToolTranscript(messages: readonly TranscriptMessage[]): void {
  let open = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === "assistant") {
      open = new Set((m.toolCalls ?? []).map((c) => c.id));
      return;
    }
    if (m.role !== "tool") {
      open = new Set();
      return;
    }
    const id = m.toolCallId ?? "";
    if (open.has(id)) {
      open.delete(id);
      return;
    }
    const known = messages.slice(0, i).some((p) => p.role === "assistant" && (p.toolCalls ?? []).some((c) => c.id === id));
    throw new TranscriptError(
      known
        ? `message ${i}: tool_call_id ${JSON.stringify(id)} was answered already, or not right after the assistant message that made the call`
        : `message ${i}: tool_call_id ${JSON.stringify(id)} answers no call: a tool message must follow the assistant message whose tool_calls include that id`,
    );
  });
}

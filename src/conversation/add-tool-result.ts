// A client's result for one tool call, by conversation id (MCP's add_tool_result). Results
// for a reply's parallel calls arrive one at a time: each is stored, and the last one queues
// the turn that continues the conversation, with the tools of the turn that made the calls.
// One transaction, under the conversation's row lock, so two last results cannot both (or
// neither) queue it.
import { randomUUID } from "node:crypto";
import { appendMessages, lockConversation, openConversation, type StoredMessage } from "../db/sql/conversations.js";
import { turnOfMessage } from "../db/sql/turns.js";
import { inTransaction } from "../db/pool.js";
import { Channel } from "../jobs/bus.js";
import { queueTurnIn, type TurnDeps } from "./start-turn.js";
import { knownLimits } from "./context-fit.js";
import { TranscriptError } from "./tool-transcript.js";
import { UserError, type UserErrorOptions } from "../errors.js";

export class ConversationNotFound extends UserError {
  override name = "ConversationNotFound";
  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { status: 404, param: "conversation_id", code: "conversation_not_found", ...opts });
  }
}

export interface ToolResultInput {
  conversationId: string;
  toolCallId: string;
  content: string;
  /** The continuing turn's id, when the caller follows it (made here otherwise). */
  turnId?: string;
  /** For a conversation whose calls came from no stored turn. */
  defaults: { model: string; maxTokens: number };
  /** The request's scope: a conversation of another is not there for it. */
  scope?: string | undefined;
}

export type ToolResultOutcome = { state: "waiting"; waitingFor: string[] } | { state: "queued"; turnId: string };

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

export async function addToolResult(deps: TurnDeps, input: ToolResultInput): Promise<ToolResultOutcome> {
  const turnId = input.turnId ?? randomUUID();
  const limits = await knownLimits(deps);
  const outcome = await inTransaction(deps.pool, async (client): Promise<ToolResultOutcome> => {
    if (!(await lockConversation(client, input.conversationId)))
      throw new ConversationNotFound(`No conversation '${input.conversationId}'`);
    const opened = await openConversation(client, input.conversationId, input.scope);
    const { assistantId, open } = openCalls(opened.messages);
    if (!open.includes(input.toolCallId)) {
      throw new TranscriptError(
        open.length
          ? `tool_call_id ${JSON.stringify(input.toolCallId)} is not waiting for a result; these are: ${open.join(", ")}`
          : `no tool call in conversation '${input.conversationId}' is waiting for a result`,
      );
    }
    const message = { role: "tool" as const, content: input.content, toolCallId: input.toolCallId };
    const waitingFor = open.filter((id) => id !== input.toolCallId);
    if (waitingFor.length) {
      await appendMessages(client, input.conversationId, null, [message]);
      return { state: "waiting", waitingFor };
    }
    // The continuation is generated like the turn that made the calls, its tools offered again
    // (the model chooses now: a forced choice would force another call).
    const made = assistantId === null ? undefined : await turnOfMessage(client, assistantId);
    await queueTurnIn(client, { boss: deps.boss, limits }, opened, {
      conversationId: input.conversationId,
      turnId,
      messages: [message],
      tools: made?.tools ?? null,
      toolChoice: made?.tools?.length ? "auto" : null,
      parallelToolCalls: made?.parallel_tool_calls ?? null,
      model: made?.model ?? input.defaults.model,
      temperature: made?.temperature ?? null,
      topP: made?.top_p ?? null,
      topK: made?.top_k ?? null,
      maxTokens: made?.max_tokens ?? input.defaults.maxTokens,
      seed: null,
      stop: made?.stop ?? [],
      stream: false,
    });
    return { state: "queued", turnId };
  });
  if (outcome.state === "queued") deps.bus.notify(Channel.jobs, outcome.turnId);
  return outcome;
}

// Storing a turn the web side opens (conversation/open-turn.ts): its conversation's new messages,
// the queued turn and its job, in one statement, inside the caller's transaction or alone.
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import type { NewMessage, OpenedConversation } from "../db/sql/conversations.js";
import {
  type ClaimedTurn,
  insertedTurn,
  insertTurnWithMessages,
  type NewTurn,
  type StoredTurn,
  type TakenTurn,
  type TurnWithMessages,
} from "../db/sql/turns.js";
import type { ToolCall } from "../tools/types.js";
import type { Queryable } from "../db/pool.js";
import { INFERENCE_QUEUE, Priority, sendStatement } from "../jobs/queue.js";
import { continueAfter, decideNewMessages } from "./new-messages.js";
import { checkToolTranscript } from "./tool-transcript.js";
import { fitReply, type KnownLimits } from "./context-fit.js";
import { asJsonb } from "../db/jsonb-value.js";

/** A turn as it is queued: its settings, its conversation, and the request's messages. */
export interface QueuedTurn extends NewTurn {
  turnId: string;
  messages: NewMessage[];
  /** Continue after this position: every message is new, and later stored ones are superseded. */
  continueAfter?: number;
  /** Stored already claimed by this worker (a TurnTaker's reservation, jobs/hand-off.ts). */
  claimedBy?: string | undefined;
  /**
   * With claimedBy: given the turn as it is about to be stored claimed, just before the storing
   * statement runs, so that the worker begins it while it is stored (jobs/hand-off.ts).
   */
  beforeStore?: ((taken: { jobId: string; turn: ClaimedTurn }) => void) | undefined;
}

/**
 * Inside the caller's transaction, after it opened the conversation (which locks it until
 * commit), or on its own for a new conversation: stores the request's new messages and a
 * queued turn, and enqueues its job, in one statement: a new conversation's turn then costs one
 * round trip on the first token's path (docs/benchmarks.md, "A turn's way in"). Throws a
 * TranscriptError, having written nothing, when a tool message answers no call, and a
 * ContextOverflow when the whole transcript does not fit the model's context.
 */
export async function queueTurnIn(
  db: Queryable,
  deps: { boss: PgBoss; limits: KnownLimits },
  opened: OpenedConversation,
  input: QueuedTurn,
): Promise<TakenTurn> {
  const jobId = randomUUID();
  const decision =
    input.continueAfter === undefined
      ? decideNewMessages(opened.messages, input.messages)
      : continueAfter(opened.messages, input.continueAfter, input.messages.length);
  const fresh = input.messages.slice(decision.from);
  const kept = opened.messages.slice(0, decision.supersedeFrom ?? opened.messages.length);
  checkToolTranscript([...kept.map((m) => ({ role: m.role, toolCalls: m.tool_calls, toolCallId: m.tool_call_id })), ...fresh]);
  // The whole transcript the model will read, stored and new: the reply gets what it leaves.
  const transcript = [
    ...(input.instructions ? [{ content: input.instructions }] : []),
    ...kept.map((m) => ({ content: m.content, toolCalls: m.tool_calls })),
    ...fresh,
  ];
  const maxTokens = await fitReply(deps.limits, transcript, { client: input.tools, choice: input.toolChoice }, input.maxTokens);
  const firstPosition = opened.maxPosition + 1;
  const job = await sendStatement(
    deps.boss,
    INFERENCE_QUEUE,
    { kind: "chat", turnId: input.turnId },
    { id: jobId, priority: Priority.chat },
  );
  const { beforeStore, ...fields } = input;
  const row: TurnWithMessages = {
    ...fields,
    maxTokens,
    jobId,
    supersedeFrom: decision.supersedeFrom === undefined ? null : opened.messages[decision.supersedeFrom]!.position,
    firstPosition,
    messages: fresh,
    promptEndPosition: fresh.length ? firstPosition + fresh.length - 1 : (kept.at(-1)?.position ?? 0),
  };
  // The prompt as a claim would read it back (db/sql/turns.ts, CLAIMED_COLUMNS): the kept
  // transcript with the contexts placed in it, then the new messages, tool calls as stored JSON (none: null).
  const promptMessages: ClaimedTurn["prompt_messages"] = [
    ...kept.map((m) => ({
      position: m.position,
      role: m.role,
      content: m.content,
      tool_calls: m.tool_calls,
      tool_call_id: m.tool_call_id,
      context: m.context,
    })),
    ...fresh.map((m, i) => ({
      position: firstPosition + i,
      context: null,
      role: m.role,
      content: m.content,
      tool_calls: m.toolCalls?.length ? (asJsonb(m.toolCalls) as ToolCall[]) : null,
      tool_call_id: m.toolCallId ?? null,
    })),
  ];
  const claimedBy = input.claimedBy;
  // Sent before the turn is handed: the worker's first steps (its prompt rendered and
  // tokenized, a slot chosen) are this thread's work up to the model's first call, and the
  // statement's bytes waited behind them, 1.4-2.3 ms on the first token's path (docs/benchmarks.md,
  // "The embedded database on its own thread"). On a connection of its own, the statement is
  // written in the next microtask, before the worker's; the pool's query waits for a tick.
  const storing = insertTurnWithMessages(db, row, job);
  if (claimedBy !== undefined) beforeStore?.({ jobId, turn: handedTurn(insertedTurn({ ...row, claimedBy }, new Date()), promptMessages) });
  const stored = await storing;
  if (claimedBy === undefined) return { jobId, turn: undefined };
  return { jobId, turn: handedTurn(stored, promptMessages) };
}

/** A turn stored already claimed, as a claim would return it: nothing streamed yet. */
export function handedTurn(stored: StoredTurn, promptMessages: ClaimedTurn["prompt_messages"]): ClaimedTurn {
  return { ...stored, prompt_messages: promptMessages, streamed_text: "", streamed_tokens: 0, last_seq: 0 };
}

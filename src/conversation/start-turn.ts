// The web side of a chat turn: store the conversation, its new messages and a queued turn,
// and enqueue the job, all in one short transaction; then signal the worker.
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import { type NewMessage, type OpenedConversation, openConversation } from "../db/sql/conversations.js";
import { insertTurnWithMessages, JOB_NOT_QUEUED, type NewTurn } from "../db/sql/turns.js";
import { inTransaction, type Pool, type Queryable } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { INFERENCE_QUEUE, Priority, sendStatement } from "../jobs/queue.js";
import { continueAfter, decideNewMessages } from "./new-messages.js";
import { checkToolTranscript } from "./tool-transcript.js";
import { type ContextLimits, fitReply, type KnownLimits, knownLimits } from "./context-fit.js";

export interface StartTurnInput extends Omit<NewTurn, "conversationId"> {
  /** An explicit conversation id continues (or names) a stored conversation. */
  conversationId?: string | undefined;
  messages: NewMessage[];
  /** Chosen by the caller when it must know the id before the turn exists (to follow it). */
  turnId?: string;
  /** Continue after this position: all messages are new, later stored ones are superseded. */
  continueAfter?: number;
}

export interface StartedTurn {
  turnId: string;
  conversationId: string;
}

export interface TurnDeps extends ContextLimits {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
}

/**
 * One statement for a new conversation (its turn, messages and job: ids are made here, so
 * nothing is read back), and a transaction of 4 round trips when continuing one (begin, open
 * and lock it, that statement, commit). It is on the first token's path: a new conversation's
 * turn took 5.6 ms to store at the median as a transaction of four round trips, 2.8 ms as one
 * statement (twelve one-stream chats each, the embedded database on two cores).
 */
export async function startTurn(deps: TurnDeps, input: StartTurnInput): Promise<StartedTurn> {
  const conversationId = input.conversationId ?? randomUUID();
  const turnId = input.turnId ?? randomUUID();
  const limits = await knownLimits(deps);
  const turn = { ...input, conversationId, turnId };
  if (input.conversationId === undefined) {
    // Without an id the request is a conversation of its own: nothing to read or lock.
    await queueTurnIn(deps.pool, { boss: deps.boss, limits }, { messages: [], maxPosition: 0 }, turn);
  } else {
    await inTransaction(deps.pool, async (client) => {
      const opened = await openConversation(client, conversationId, input.scope);
      await queueTurnIn(client, { boss: deps.boss, limits }, opened, turn);
    });
  }
  deps.bus.notify(Channel.jobs, turnId);
  return { turnId, conversationId };
}

/**
 * Inside the caller's transaction, after it opened the conversation (which locks it until
 * commit), or on its own for a new conversation: stores the request's new messages and a
 * queued turn, and enqueues its job, in one statement. Throws a TranscriptError, having written
 * nothing, when a tool message answers no call, and a ContextOverflow when the whole transcript
 * does not fit the model's context.
 */
export async function queueTurnIn(
  db: Queryable,
  deps: Pick<TurnDeps, "boss"> & { limits: KnownLimits },
  opened: OpenedConversation,
  input: StartTurnInput & { conversationId: string; turnId: string },
): Promise<void> {
  const jobId = randomUUID();
  const decision =
    input.continueAfter === undefined
      ? decideNewMessages(opened.messages, input.messages)
      : continueAfter(opened.messages, input.continueAfter, input.messages.length);
  const fresh = input.messages.slice(decision.from);
  const kept = opened.messages.slice(0, decision.supersedeFrom ?? opened.messages.length);
  checkToolTranscript([...kept.map((m) => ({ role: m.role, toolCalls: m.tool_calls, toolCallId: m.tool_call_id })), ...fresh]);
  // The whole transcript the model will read, stored and new: the reply gets what it leaves.
  const transcript = [...kept.map((m) => ({ content: m.content, toolCalls: m.tool_calls })), ...fresh];
  const maxTokens = await fitReply(deps.limits, transcript, input.tools, input.maxTokens);
  const firstPosition = opened.maxPosition + 1;
  const job = await sendStatement(
    deps.boss,
    INFERENCE_QUEUE,
    { kind: "chat", turnId: input.turnId },
    { id: jobId, priority: Priority.chat },
  );
  const turn = {
    ...input,
    maxTokens,
    jobId,
    supersedeFrom: decision.supersedeFrom === undefined ? null : opened.messages[decision.supersedeFrom]!.position,
    firstPosition,
    messages: fresh,
    promptEndPosition: fresh.length ? firstPosition + fresh.length - 1 : (kept.at(-1)?.position ?? 0),
  };
  try {
    await insertTurnWithMessages(db, turn, job);
  } catch (err) {
    if ((err as { code?: string }).code === JOB_NOT_QUEUED) throw new Error("pg-boss did not accept the chat job");
    throw err;
  }
}

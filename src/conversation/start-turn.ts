// The web side of a chat turn: store the conversation, its new messages and a queued turn,
// and enqueue the job, all in one short transaction; then signal the worker.
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import { activeMessages, appendMessages, type NewMessage, supersedeFrom, upsertConversation } from "../db/sql/conversations.js";
import { insertTurn, type NewTurn, setTurnJob, setTurnPromptEnd } from "../db/sql/turns.js";
import { inTransaction, type Pool } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { INFERENCE_QUEUE, Priority } from "../jobs/queue.js";
import { decideNewMessages } from "./new-messages.js";

export interface StartTurnInput extends Omit<NewTurn, "conversationId"> {
  /** An explicit conversation id continues (or names) a stored conversation. */
  conversationId?: string | undefined;
  messages: NewMessage[];
}

export interface StartedTurn {
  turnId: string;
  conversationId: string;
}

export interface TurnDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
}

export async function startTurn(deps: TurnDeps, input: StartTurnInput): Promise<StartedTurn> {
  const conversationId = input.conversationId ?? randomUUID();
  const turnId = await inTransaction(deps.pool, async (client) => {
    const existed = await upsertConversation(client, conversationId);
    const stored = existed ? await activeMessages(client, conversationId) : [];
    const decision = decideNewMessages(stored, input.messages);
    const turnId = await insertTurn(client, { ...input, conversationId });
    if (decision.supersedeFrom !== undefined) {
      await supersedeFrom(client, conversationId, stored[decision.supersedeFrom]!.position);
    }
    const kept = stored.slice(0, decision.supersedeFrom ?? stored.length);
    const lastNew = await appendMessages(client, conversationId, turnId, input.messages.slice(decision.from));
    await setTurnPromptEnd(client, turnId, lastNew ?? kept.at(-1)?.id ?? null);
    const jobId = await deps.boss.send(
      INFERENCE_QUEUE,
      { kind: "chat", turnId },
      { priority: Priority.chat, db: { executeSql: (text, values) => client.query(text, values) } },
    );
    if (!jobId) throw new Error("pg-boss did not accept the chat job");
    await setTurnJob(client, turnId, jobId);
    return turnId;
  });
  deps.bus.notify(Channel.jobs, turnId);
  return { turnId, conversationId };
}

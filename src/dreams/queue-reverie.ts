// How a reverie is asked for: the one place a dream, an idle thought or a reflection is built
// from the settings in force and queued for the inference worker. The scheduler (when it is
// quiet), POST /dream/jobs and do-not-disturb (which dreams at once) all come here.
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import type { Queryable } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { DUE_AT_ONCE, INFERENCE_QUEUE, inTransactionDb, Priority, type ReverieJob } from "../jobs/queue.js";
import { DREAM_SIGNAL } from "./dream.js";
import type { DreamSettings } from "./settings.js";

/** A reverie job as the settings make it; `maxTokens` overrides the kind's budget. */
export function buildReverie(
  settings: DreamSettings,
  ask:
    | { kind: "dream" | "reflect"; focus?: string | null | undefined; maxTokens?: number | undefined }
    | { kind: "idle"; conversationId: string | null },
): ReverieJob {
  const maxSeconds = settings.dream_max_seconds;
  switch (ask.kind) {
    case "dream":
      return {
        kind: "dream",
        focus: ask.focus ?? null,
        maxTokens: ask.maxTokens ?? settings.dream_max_tokens,
        maxSeconds,
        temperature: settings.dream_temperature,
      };
    case "reflect":
      return { kind: "reflect", focus: ask.focus ?? null, maxTokens: ask.maxTokens ?? settings.reflection_max_tokens, maxSeconds };
    case "idle":
      return { kind: "idle", conversationId: ask.conversationId, maxTokens: settings.idle_thought_max_tokens, maxSeconds };
  }
}

/** An idle thought (about the conversation just had) goes before a dream or a reflection; every reverie yields to a chat. */
export function reveriePriority(job: ReverieJob): number {
  return job.kind === "idle" ? Priority.idleThought : Priority.dream;
}

export interface QueueReverieDeps {
  boss: PgBoss;
  bus: SignalBus;
}

/**
 * Queues `job` on the inference queue at its priority, never retried (a reverie that failed is
 * written in the journal, and the next quiet moment makes another). Inside a transaction
 * (`client`), the job commits with it and the caller signals after the commit; otherwise the
 * worker is signalled here. Returns the job's id, or null when the queue did not take it.
 */
export async function queueReverie(deps: QueueReverieDeps, job: ReverieJob, client?: Queryable): Promise<string | null> {
  const id = await deps.boss.send(INFERENCE_QUEUE, job, {
    ...DUE_AT_ONCE,
    id: randomUUID(),
    priority: reveriePriority(job),
    retryLimit: 0,
    ...(client ? { db: inTransactionDb(client) } : {}),
  });
  if (id && !client) signalReverie(deps.bus);
  return id;
}

/** Tells the worker a reverie is queued (a payload that must not wake a running one). */
export function signalReverie(bus: SignalBus): void {
  bus.notify(Channel.jobs, DREAM_SIGNAL);
}

// Turns held by a dead inference worker go back to the queue under a new job; the next
// worker continues from the text already streamed, so nothing is lost or said twice.
// A worker is dead when its heartbeat is stale, or at once when it ran on this host and
// its process is gone (a restart after a crash need not wait for the heartbeat to age). A job
// fetched by a worker that died before it took the job up is rescued too.
import type PgBoss from "pg-boss";
import type { Logger } from "../log.js";
import { appendClosingEvent } from "../db/sql/turn-events.js";
import { failTurn, heldTurns, moveQueuedTurn, orphanedTurns, requeueTurn, runningTurnsOnHost } from "../db/sql/turns.js";
import { anyDreaming, closeAbandonedEntries, strandedJobs } from "../db/sql/pgboss-jobs.js";
import { processAlive } from "../db/pid-lock.js";
import { inTransaction, type Pool } from "../db/pool.js";
import { Channel, type SignalBus } from "./bus.js";
import { encodeTurnSignal } from "./turn-signal.js";
import { DUE_AT_ONCE, INFERENCE_QUEUE, inTransactionDb, Priority } from "./queue.js";

/** A turn that has killed this many workers is failed instead of retried. */
export const MAX_TURN_ATTEMPTS = 3;

export interface ReclaimDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  log: Logger;
  workerId: string;
  host: string;
  staleMs: number;
}

/** Returns the ids of the turns put back in the queue. */
export async function reclaimOrphanedTurns(deps: ReclaimDeps): Promise<string[]> {
  const stale = await orphanedTurns(deps.pool, deps.staleMs);
  const local = (await runningTurnsOnHost(deps.pool, deps.host, deps.workerId)).filter((t) => !processAlive(t.pid));
  const candidates = new Map<string, { id: string; job_id: string | null; worker_id: string | null; attempts: number }>();
  for (const t of [...stale, ...local]) candidates.set(t.id, t);
  const requeued: string[] = [];
  for (const t of candidates.values()) {
    if (await requeueOrFail(deps, t, "the inference worker stopped")) {
      requeued.push(t.id);
      deps.log.warn({ turnId: t.id, deadWorker: t.worker_id }, "reclaimed a turn from a worker that stopped; retrying it");
    }
  }
  requeued.push(...(await rescueStrandedJobs(deps)));
  if (requeued.length) deps.bus.notify(Channel.jobs);
  return requeued;
}

/**
 * A dead worker's reverie: its journal entry is closed and its job cancelled in one
 * transaction (a reader never sees one without the other), or nothing would dream by itself
 * again until pg-boss expired the job.
 */
export async function closeAbandonedReveries(deps: ReclaimDeps): Promise<string[]> {
  // It runs at every heartbeat, while chats stream too: a question, not a transaction of three
  // statements, when nothing is being dreamt (on the embedded database each statement is the
  // model's process's own CPU).
  if (!(await anyDreaming(deps.pool))) return [];
  const closed = await inTransaction(deps.pool, async (client) => {
    const entries = await closeAbandonedEntries(client, deps.staleMs);
    // A reverie's job is on the inference queue, a consolidation's on the maintenance queue.
    for (const entry of entries)
      if (entry.job_id && entry.queue) await deps.boss.cancel(entry.queue, entry.job_id, { db: inTransactionDb(client) });
    return entries;
  });
  for (const entry of closed) deps.log.warn({ journalId: entry.id }, "closed a journal entry left open by a worker that stopped");
  return closed.map((e) => e.id);
}

type HeldTurn = { id: string; job_id: string | null; worker_id: string | null; attempts: number };

/**
 * A turn whose generation stopped without an end: queued again under a new job, to continue
 * from what was already streamed; after MAX_TURN_ATTEMPTS, failed with a message saying `why`.
 * True when it was queued again.
 */
async function requeueOrFail(deps: ReclaimDeps, t: HeldTurn, why: string): Promise<boolean> {
  if (t.attempts >= MAX_TURN_ATTEMPTS) {
    const message = `${why} ${t.attempts} times while generating this turn; giving up`;
    if (await failTurn(deps.pool, t.id, message)) await appendClosingEvent(deps.pool, t.id, "error", message);
    if (t.job_id) await deps.boss.cancel(INFERENCE_QUEUE, t.job_id).catch(() => undefined);
    deps.bus.notify(Channel.turn, encodeTurnSignal(t.id));
    deps.log.error({ turnId: t.id, attempts: t.attempts }, message);
    return false;
  }
  return inTransaction(deps.pool, async (client) => {
    const db = inTransactionDb(client);
    const jobId = await deps.boss.send(INFERENCE_QUEUE, { kind: "chat", turnId: t.id }, { ...DUE_AT_ONCE, priority: Priority.chat, db });
    if (!jobId) throw new Error("pg-boss did not accept the retry job");
    if (!(await requeueTurn(client, t.id, t.worker_id, jobId))) throw new Error("turn changed hands");
    // The old job will never be completed by the generation that held it: closed with the move.
    if (t.job_id) await deps.boss.cancel(INFERENCE_QUEUE, t.job_id, { db });
    return true;
  }).catch((err: unknown) => {
    deps.log.debug({ err, turnId: t.id }, "turn not requeued");
    return false;
  });
}

/**
 * Turns this worker holds whose generation lost the database (run-turn.ts, "stranded"): once
 * the database answers again they continue from what was streamed, as a dead worker's would.
 * Returns the ids settled (queued again, failed, or found ended), to forget.
 */
export async function resumeStrandedTurns(deps: ReclaimDeps, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const held = await heldTurns(deps.pool, deps.workerId, ids);
  const settled = ids.filter((id) => !held.some((t) => t.id === id));
  for (const t of held) {
    if (await requeueOrFail(deps, t, "the database went away"))
      deps.log.warn({ turnId: t.id }, "the database is back: the turn it interrupted continues");
    settled.push(t.id);
  }
  if (held.length) deps.bus.notify(Channel.jobs);
  return settled;
}

/**
 * A worker killed around a job leaves it active (db/sql/pgboss-jobs.ts, strandedJobs): a turn
 * it never claimed moves to a new job; a job whose work was done is completed; a reverie it
 * never began is cancelled (the scheduler queues the next one). Returns the turns moved.
 */
async function rescueStrandedJobs(deps: ReclaimDeps): Promise<string[]> {
  const moved: string[] = [];
  for (const job of await strandedJobs(deps.pool, INFERENCE_QUEUE, deps.staleMs)) {
    const ok = await inTransaction(deps.pool, async (client) => {
      const db = inTransactionDb(client);
      if (job.action === "move") {
        const jobId = await deps.boss.send(
          INFERENCE_QUEUE,
          { kind: "chat", turnId: job.turn_id },
          { ...DUE_AT_ONCE, priority: Priority.chat, db },
        );
        if (!jobId) throw new Error("pg-boss did not accept the retry job");
        if (!(await moveQueuedTurn(client, job.turn_id!, job.id, jobId))) throw new Error("turn changed hands");
      }
      // Four arguments: with three, pg-boss takes the options for the output and uses its own pool.
      if (job.action === "complete") await deps.boss.complete(INFERENCE_QUEUE, job.id, {}, { db });
      else await deps.boss.cancel(INFERENCE_QUEUE, job.id, { db });
      return true;
    }).catch((err: unknown) => {
      deps.log.debug({ err, jobId: job.id }, "stranded job not rescued");
      return false;
    });
    if (!ok) continue;
    if (job.action === "move") moved.push(job.turn_id!);
    const what = { move: "its turn is queued again", complete: "its work was done: completed", cancel: "it never began: cancelled" }[
      job.action
    ];
    deps.log.warn({ jobId: job.id, kind: job.kind, turnId: job.turn_id }, `a worker stopped around this job; ${what}`);
  }
  return moved;
}

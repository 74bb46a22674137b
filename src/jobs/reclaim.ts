// Turns held by a dead inference worker go back to the queue under a new job; the next
// worker continues from the text already streamed, so nothing is lost or said twice.
// A worker is dead when its heartbeat is stale, or at once when it ran on this host and
// its process is gone (a restart after a crash need not wait for the heartbeat to age). A job
// fetched by a worker that died before it took the job up is rescued too.
import type PgBoss from "pg-boss";
import type { Logger } from "../log.js";
import { appendClosingEvent } from "../db/sql/turn-events.js";
import { failTurn, moveQueuedTurn, orphanedTurns, requeueTurn, runningTurnsOnHost } from "../db/sql/turns.js";
import { strandedJobs } from "../db/sql/pgboss-jobs.js";
import { processAlive } from "../db/pid-lock.js";
import { inTransaction, type Pool } from "../db/pool.js";
import { Channel, type SignalBus } from "./bus.js";
import { encodeTurnSignal } from "./turn-signal.js";
import { INFERENCE_QUEUE, inTransactionDb, Priority } from "./queue.js";

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
    const attempts = t.attempts;
    if (attempts >= MAX_TURN_ATTEMPTS) {
      const message = `the inference worker stopped ${attempts} times while generating this turn; giving up`;
      if (await failTurn(deps.pool, t.id, message)) await appendClosingEvent(deps.pool, t.id, "error", message);
      if (t.job_id) await deps.boss.cancel(INFERENCE_QUEUE, t.job_id).catch(() => undefined);
      deps.bus.notify(Channel.turn, encodeTurnSignal(t.id));
      deps.log.error({ turnId: t.id, attempts }, message);
      continue;
    }
    const ok = await inTransaction(deps.pool, async (client) => {
      const db = inTransactionDb(client);
      const jobId = await deps.boss.send(INFERENCE_QUEUE, { kind: "chat", turnId: t.id }, { priority: Priority.chat, db });
      if (!jobId) throw new Error("pg-boss did not accept the retry job");
      if (!(await requeueTurn(client, t.id, t.worker_id, jobId))) throw new Error("turn changed hands");
      // The dead worker's job will never be completed by it: close it with the turn's move.
      if (t.job_id) await deps.boss.cancel(INFERENCE_QUEUE, t.job_id, { db });
      return true;
    }).catch((err: unknown) => {
      deps.log.debug({ err, turnId: t.id }, "turn not reclaimed");
      return false;
    });
    if (ok) {
      requeued.push(t.id);
      deps.log.warn({ turnId: t.id, deadWorker: t.worker_id }, "reclaimed a turn from a worker that stopped; retrying it");
    }
  }
  requeued.push(...(await rescueStrandedJobs(deps)));
  if (requeued.length) deps.bus.notify(Channel.jobs);
  return requeued;
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
        const jobId = await deps.boss.send(INFERENCE_QUEUE, { kind: "chat", turnId: job.turn_id }, { priority: Priority.chat, db });
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
    const what = { move: "its turn is queued again", complete: "its work was done: completed", cancel: "it never began: cancelled" }[job.action];
    deps.log.warn({ jobId: job.id, kind: job.kind, turnId: job.turn_id }, `a worker stopped around this job; ${what}`);
  }
  return moved;
}

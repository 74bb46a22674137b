// Re-embedding: when the configured embedder differs from the one that made some memories'
// vectors, a maintenance job re-embeds them in batches. Progress is in embedding_runs; a run
// stopped half-way (crash, restart) resumes, because it only ever takes stale rows.
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import { inTransaction, type Pool } from "../db/pool.js";
import {
  activeRun,
  addRunProgress,
  endRun,
  getRun,
  insertRun,
  startRun,
  staleMemories,
  staleMemoryCount,
} from "../db/sql/embedding-runs.js";
import { ensureVectorIndex, setEmbeddings } from "../db/sql/memories.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { DUE_AT_ONCE, inTransactionDb, MAINTENANCE_QUEUE, MAINTENANCE_SIGNAL, Priority, type ReembedJob } from "../jobs/queue.js";
import type { Logger } from "../log.js";
import type { Embedder } from "./embedder.js";
import { AdvisoryLock, lockForTransaction } from "../db/sql/locks.js";

export interface ReembedDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  embedder: Embedder;
  log: Logger;
}

/** Serialises "is a run needed" across processes starting at once. */

/**
 * Makes sure this embedder has its index, and queues a run when live memories carry vectors
 * from another embedder and no run for this one is queued or running. Returns the run id.
 */
export async function queueReembeddingIfNeeded(deps: ReembedDeps): Promise<string | undefined> {
  const space = { embedder: deps.embedder.id, dimensions: deps.embedder.dimensions };
  await ensureVectorIndex(deps.pool, space);
  const runId = await inTransaction(deps.pool, async (client) => {
    await lockForTransaction(client, AdvisoryLock.reembed);
    const stale = await staleMemoryCount(client, space.embedder);
    if (stale === 0) return undefined;
    const active = await activeRun(client, space.embedder);
    if (active) return active.id;
    const id = randomUUID();
    await insertRun(client, id, space.embedder, stale);
    const job: ReembedJob = { kind: "reembed", runId: id, embedder: space.embedder };
    await deps.boss.send(MAINTENANCE_QUEUE, job, {
      ...DUE_AT_ONCE,
      priority: Priority.maintenance,
      singletonKey: `reembed:${id}`,
      db: inTransactionDb(client),
    });
    deps.log.info({ embedder: space.embedder, memories: stale }, "memories carry another embedder's vectors: re-embedding queued");
    return id;
  });
  if (runId) deps.bus.notify(Channel.memory, MAINTENANCE_SIGNAL);
  return runId;
}

/** Runs (or resumes) one re-embedding run until no stale memory is left or `signal` aborts. */
export async function runReembedding(
  deps: ReembedDeps & { batchSize: number },
  job: ReembedJob,
  signal: AbortSignal,
): Promise<"done" | "superseded" | "stopped"> {
  const run = await getRun(deps.pool, job.runId);
  if (!run || run.status === "done" || run.status === "superseded") return "done";
  // Another process with another embedder took this job: leave the run to a process that has it.
  if (job.embedder !== deps.embedder.id) {
    await endRun(deps.pool, job.runId, "superseded", `this process embeds with ${deps.embedder.id}`);
    return "superseded";
  }
  const space = { embedder: deps.embedder.id, dimensions: deps.embedder.dimensions };
  await startRun(deps.pool, job.runId, run.done + (await staleMemoryCount(deps.pool, space.embedder)));
  for (;;) {
    if (signal.aborted) return "stopped";
    const current = await getRun(deps.pool, job.runId);
    if (current?.status === "superseded") return "superseded";
    const batch = await staleMemories(deps.pool, space.embedder, deps.batchSize);
    if (batch.length === 0) break;
    const vectors = await deps.embedder.embed(
      batch.map((m) => m.text),
      signal,
    );
    const written = await setEmbeddings(
      deps.pool,
      space,
      batch.map((m, i) => ({ id: m.id, vector: vectors[i]! })),
    );
    await addRunProgress(deps.pool, job.runId, written);
  }
  await endRun(deps.pool, job.runId, "done");
  deps.log.info({ embedder: space.embedder, runId: job.runId }, "re-embedding done");
  return "done";
}

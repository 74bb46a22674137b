// Every advisory lock Psyche takes, by name, in one place so that no two uses share an id.
// Only transaction-scoped locks: on the embedded database every connection shares one backend,
// so a session lock excludes nothing there, while the socket's serialised transactions make
// `pg_advisory_xact_lock` exclusive on both it and a real Postgres.
import type { Queryable } from "../pool.js";

export const AdvisoryLock = {
  /** Applying migrations (db/migrate.ts). */
  migration: 7_415_001,
  /** Storing or folding memories: the near-duplicate check and the insert are one step (memory/memory.ts, memory/consolidate.ts). */
  memoryStore: 7_415_002,
  /** Writing the mood (mood/mood-keeper.ts). */
  mood: 7_415_003,
  /** Starting a re-embedding run (memory/reembed.ts). */
  reembed: 7_415_004,
  /** The dream scheduler's check-and-queue (dreams/scheduler.ts). */
  dreamSchedule: 7_415_005,
} as const;
export type AdvisoryLock = (typeof AdvisoryLock)[keyof typeof AdvisoryLock];

/** Takes `lock` until the caller's transaction ends; `db` must be inside one. */
export async function lockForTransaction(db: Queryable, lock: AdvisoryLock): Promise<void> {
  await db.query("select pg_advisory_xact_lock($1)", [lock]);
}

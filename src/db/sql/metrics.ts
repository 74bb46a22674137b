// The facts /metrics reports that live in the database, read in one round trip, so that every
// web process reports the same values.
import type { Queryable } from "../pool.js";
import { JOBS_BY_STATE_SQL } from "./pgboss-jobs.js";

export interface DatabaseFacts {
  tokens: { prompt: number; completion: number };
  queue: { queue: string; state: string; n: number }[];
  reveries: { kind: string; status: string; n: number }[];
  memories: { kind: string; n: number }[];
  /** Seconds from a chat's arrival to the reverie it woke stopping, one per woken reverie. */
  wakeLatencies: number[];
}

export async function databaseFacts(db: Queryable, queues: readonly string[]): Promise<DatabaseFacts> {
  const res = await db.query<{ facts: DatabaseFacts }>(
    `select json_build_object(
       'tokens', (select json_build_object('prompt', coalesce(sum(prompt_tokens), 0), 'completion', coalesce(sum(completion_tokens), 0)) from turns),
       'queue', coalesce((select json_agg(q) from (${JOBS_BY_STATE_SQL}) q), '[]'),
       'reveries', coalesce((select json_agg(r) from (select kind, status, count(*)::int as n from dream_journal group by 1, 2) r), '[]'),
       'memories', coalesce((select json_agg(m) from (select kind, count(*)::int as n from memories where deleted_at is null and merged_into is null group by 1) m), '[]'),
       'wakeLatencies', coalesce((select json_agg(wake_latency_ms / 1000.0) from dream_journal where wake_latency_ms is not null), '[]')
     ) as facts`,
    [queues],
  );
  return res.rows[0]!.facts;
}

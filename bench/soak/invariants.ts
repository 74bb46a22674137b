// What must hold after a soak, read from the database: every turn finished exactly once, every
// reply a client read equals the stored one, every finished turn has exactly one memory job,
// nothing is left running, and nothing was written for a refused request.
import type { Pool } from "../../src/db/pool.js";
import { REJECTED_MARKER, type ClientLog } from "./clients.js";

export interface Invariants {
  turns: number;
  /** Turns not finished (queued, running or failed) once the soak has settled. */
  lost: string[];
  /** Turns with more than one closing event or more than one reply message. */
  duplicated: string[];
  /** Replies a client read that differ from the stored one, or name no stored turn. */
  mismatched: string[];
  /** Finished turns without exactly one memory job. */
  memoryJobsWrong: string[];
  /** Inference jobs still queued or active, and journal entries still dreaming. */
  leftRunning: { jobs: number; dreams: number };
  /** Messages that hold a refused request's marker. */
  rejectedWritten: number;
}

export async function checkInvariants(pool: Pool, log: ClientLog): Promise<Invariants> {
  const turns = await pool.query<{ id: string; status: string; content: string | null; finish_reason: string | null }>(
    "select id, status, content, finish_reason from turns",
  );
  const byId = new Map(turns.rows.map((t) => [t.id, t]));
  const lost = turns.rows.filter((t) => t.status !== "done").map((t) => `${t.id} (${t.status})`);
  const closings = await pool.query<{ turn_id: string }>(
    "select turn_id from turn_events where kind in ('done', 'error') group by turn_id having count(*) > 1",
  );
  const replies = await pool.query<{ turn_id: string }>(
    "select turn_id from messages where role = 'assistant' and turn_id is not null group by turn_id having count(*) > 1",
  );
  const duplicated = [...new Set([...closings.rows, ...replies.rows].map((r) => r.turn_id))];
  const mismatched: string[] = [];
  for (const r of log.replies) {
    const stored = byId.get(r.turnId);
    if (!stored || (stored.content ?? "") !== r.text)
      mismatched.push(`${r.turnId}${r.streamed ? " (streamed)" : ""}${r.resumed ? " (resumed)" : ""}`);
  }
  // pg-boss moves finished jobs to its archive: a turn's memory job is in one or the other.
  const jobs = await pool.query<{ turn_id: string; n: number }>(
    `select data->>'turnId' as turn_id, count(*)::int as n from (
       select data from pgboss.job where name = 'psyche-memory'
       union all select data from pgboss.archive where name = 'psyche-memory') j
     group by 1`,
  );
  const jobCount = new Map(jobs.rows.map((j) => [j.turn_id, j.n]));
  const memoryJobsWrong = turns.rows
    .filter((t) => t.status === "done" && t.finish_reason !== "cancelled" && jobCount.get(t.id) !== 1)
    .map((t) => `${t.id} (${jobCount.get(t.id) ?? 0} jobs)`);
  const running = await pool.query<{ jobs: number; dreams: number }>(
    `select (select count(*)::int from pgboss.job where name = 'psyche-inference' and state in ('created', 'retry', 'active')) as jobs,
            (select count(*)::int from dream_journal where status = 'dreaming') as dreams`,
  );
  const rejected = await pool.query<{ n: number }>("select count(*)::int as n from messages where content like $1", [
    `%${REJECTED_MARKER}%`,
  ]);
  return {
    turns: turns.rows.length,
    lost,
    duplicated,
    mismatched,
    memoryJobsWrong,
    leftRunning: running.rows[0]!,
    rejectedWritten: rejected.rows[0]!.n,
  };
}

/** True when every invariant holds. */
export function allHold(i: Invariants): boolean {
  return (
    !i.lost.length &&
    !i.duplicated.length &&
    !i.mismatched.length &&
    !i.memoryJobsWrong.length &&
    i.leftRunning.jobs === 0 &&
    i.leftRunning.dreams === 0 &&
    i.rejectedWritten === 0
  );
}

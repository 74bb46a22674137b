// Every statement that reads or writes pg-boss's own tables, so that a pg-boss upgrade (its
// schema is not an API) touches this file alone. Queue names come from jobs/queue.ts.
import type { Queryable } from "../pool.js";
import { type ForeignStatement, raw, type Sql, sql } from "../statement.js";

/**
 * A queue's name as a literal in a statement's text, not a parameter. pg-boss partitions its
 * job table by queue name, and with the name a parameter Postgres plans the statement afresh
 * at every execution (a custom plan prunes the partitions; the generic plan cannot, so it never
 * looks cheaper): docs/decisions.md, "Queue names as literals". The names are jobs/queue.ts's
 * constants; anything else is refused rather than quoted.
 */
export function queueLiteral(queue: string): string {
  if (!/^[a-z][a-z0-9_.-]*$/.test(queue)) throw new Error(`not a queue name: ${JSON.stringify(queue)}`);
  return `'${queue}'`;
}

/** The columns of pgboss.job these statements read or write (pg-boss 10.4.2, pinned in package.json). */
const JOB_COLUMNS = [
  "id",
  "name",
  "state",
  "priority",
  "data",
  "start_after",
  "started_on",
  "completed_on",
  "created_on",
  "retry_count",
  "output",
];

/**
 * Checked once pg-boss has made its schema: a pg-boss whose job table lacks a column these
 * statements use fails here, saying so, rather than at the first chat.
 */
export async function checkJobTable(db: Queryable): Promise<void> {
  const res = await db.query<{ column_name: string }>(
    "select column_name from information_schema.columns where table_schema = 'pgboss' and table_name = 'job'",
  );
  const have = new Set(res.rows.map((r) => r.column_name));
  const missing = JOB_COLUMNS.filter((c) => !have.has(c));
  if (missing.length)
    throw new Error(
      `pg-boss's job table has no ${missing.join(", ")}: Psyche's statements on it (src/db/sql/pgboss-jobs.ts) were written for pg-boss 10.4.2; install the version package.json pins`,
    );
}

/** Psyche's index on pg-boss's job table: the jobs waiting or running, by queue, state and start. */
export const LIVE_JOBS_INDEX = "psyche_job_live";

/**
 * Made once pg-boss has made its schema (jobs/queue.ts startQueue; pg-boss's schema does not
 * exist yet when our migrations run). pg-boss keeps finished jobs in the job table for twelve
 * hours before archiving them, and indexes waiting jobs only (for its fetch), so every question
 * about running ones here (strandedJobs at each heartbeat, queueBusy in the dream scheduler's
 * look, queueCounts for /health) read every job of those hours: 4 ms a question at 20,000 on
 * the embedded database, whose statements run on the server's one thread (docs/benchmarks.md,
 * "pg-boss's finished jobs"). Made on the partitioned table, each queue's partition has it,
 * those pg-boss attaches later too. Asked first, so a start where it exists takes no lock on
 * the table; two processes starting at once may both make it, and the loser's error is taken
 * as "it exists".
 */
export async function indexLiveJobs(db: Queryable): Promise<void> {
  const exists = async () =>
    ((await db.query("select 1 from pg_indexes where schemaname = 'pgboss' and indexname = $1", [LIVE_JOBS_INDEX])).rowCount ?? 0) > 0;
  if (await exists()) return;
  try {
    await db.query(`create index if not exists ${LIVE_JOBS_INDEX} on pgboss.job (name, state, started_on) where state <= 'active'`);
  } catch (err) {
    if (!(await exists())) throw err;
  }
}

/** A statement's part that counts `queues`' jobs by queue and state (the metrics' queue gauge, db/sql/metrics.ts); `$1` the queue names. */
export const JOBS_BY_STATE_SQL =
  "select name as queue, state::text as state, count(*)::int as n from pgboss.job where name = any($1) group by 1, 2";

/** Jobs waiting (created or retrying) and running, by state. */
export async function queueCounts(db: Queryable, queue: string): Promise<{ queued: number; active: number }> {
  const res = await db.query<{ state: string; n: number }>(
    `select state::text, count(*)::int as n from pgboss.job where name = ${queueLiteral(queue)} and state in ('created', 'retry', 'active') group by state`,
  );
  const n = (s: string) => res.rows.find((r) => r.state === s)?.n ?? 0;
  return { queued: n("created") + n("retry"), active: n("active") };
}

/** Whether anything is waiting or running on `queue` (the dream scheduler starts nothing then). */
export async function queueBusy(db: Queryable, queue: string): Promise<boolean> {
  const res = await db.query<{ busy: boolean }>(
    `select exists (select 1 from pgboss.job where name = ${queueLiteral(queue)} and state in ('created', 'retry', 'active')) as busy`,
  );
  return res.rows[0]?.busy ?? false;
}

/** Whether a job that outranks `priority` waits (checked as a reverie starts: no dream while a chat waits). */
export async function waitingAbove(db: Queryable, queue: string, priority: number): Promise<boolean> {
  const res = await db.query<{ waiting: boolean }>(
    `select exists (select 1 from pgboss.job where name = ${queueLiteral(queue)} and state in ('created', 'retry') and start_after < now() and priority > $1) as waiting`,
    [priority],
  );
  return res.rows[0]?.waiting ?? false;
}

/**
 * A statement's part that takes job `id` (an SQL fragment) of queue `queue` as pg-boss's fetch
 * does (node_modules/pg-boss/src/plans.js, fetchNextJob): waiting and due, then active, its
 * retry counted when it ran before. Returns the job's id; nothing when it is not waiting.
 */
export const takeJobSql = (queue: string, id: Sql) =>
  sql`update pgboss.job set state = 'active', started_on = now(),
          retry_count = case when started_on is not null then retry_count + 1 else retry_count end
     where name = ${raw(queueLiteral(queue))} and id = ${id} and state < 'active' and start_after < now()
     returning id`;

/**
 * pg-boss's insert of a job (jobs/queue.ts sendStatement) changed to insert it already taken:
 * active, started now, as its fetch would leave it. For a turn stored already claimed by the
 * worker of the storing process (conversation/start-turn.ts): no fetch or take comes after. Its
 * text is pg-boss's (node_modules/pg-boss/src/plans.js, insertJob): the column list and the
 * select list each end at the queue's policy, once; a pg-boss whose insert is otherwise throws
 * here, not at a turn's statement.
 */
export function insertTakenJob(job: ForeignStatement): ForeignStatement {
  const columns = /\bpolicy(\s*\)\s*SELECT\b)/g;
  const selected = /\bq\.policy(\s+FROM\b)/g;
  if ((job.text.match(columns)?.length ?? 0) !== 1 || (job.text.match(selected)?.length ?? 0) !== 1)
    throw new Error("pg-boss's job insert is not the one src/db/sql/pgboss-jobs.ts insertTakenJob was written for (pg-boss 10.4.2)");
  const text = job.text.replace(columns, "policy, state, started_on$1").replace(selected, "q.policy, 'active'::pgboss.job_state, now()$1");
  return { text, values: job.values };
}

/**
 * A statement's part that completes active job `id` (an SQL fragment) of queue `queue` as
 * pg-boss's complete does without output (node_modules/pg-boss/src/plans.js, completeJobs).
 */
export const completeJobSql = (queue: string, id: Sql) =>
  sql`update pgboss.job set completed_on = now(), state = 'completed'
     where name = ${raw(queueLiteral(queue))} and id = ${id} and state = 'active'
     returning id`;

/** Returns a fetched job to the queue untouched, to run after what outranks it. */
export async function putBack(db: Queryable, queue: string, jobId: string): Promise<void> {
  await db.query(
    `update pgboss.job set state = 'created', started_on = null where name = ${queueLiteral(queue)} and id = $1 and state = 'active'`,
    [jobId],
  );
}

export interface ReverieJobRow {
  id: string;
  name: string;
  state: string;
  data: Record<string, unknown>;
  created_on: Date;
  started_on: Date | null;
  completed_on: Date | null;
  output: unknown;
}

/** A dream, reflection or consolidation job as pg-boss holds it (queued through the API or the schedule). */
export async function reverieJob(db: Queryable, id: string, queues: readonly string[]): Promise<ReverieJobRow | undefined> {
  const res = await db.query<ReverieJobRow>(
    `select id, name, state::text as state, data, created_on, started_on, completed_on, output from pgboss.job where id = $1 and name = any($2::text[])`,
    [id, queues],
  );
  return res.rows[0];
}

/** Whether a reverie is queued, running or being written. */
export async function reverieUnderway(db: Queryable, queue: string): Promise<boolean> {
  const res = await db.query<{ yes: boolean }>(
    `select exists (select 1 from pgboss.job where name = ${queueLiteral(queue)} and state in ('created', 'retry', 'active') and data->>'kind' in ('dream', 'reflect', 'idle'))
       or exists (select 1 from dream_journal where status = 'dreaming' and kind <> 'consolidate') as yes`,
  );
  return res.rows[0]?.yes ?? false;
}

/** Whether any journal entry is being dreamt now: closing abandoned ones has nothing to look at otherwise. */
export async function anyDreaming(db: Queryable): Promise<boolean> {
  const res = await db.query<{ any: boolean }>("select exists (select 1 from dream_journal where status = 'dreaming') as any");
  return res.rows[0]?.any ?? false;
}

/**
 * Closes journal entries left open by a worker that died (stopped, or its heartbeat older than
 * `staleMs`), or with no worker on record (none named, or it died before registering) whose job
 * is no longer running. A consolidation names the inference worker of its process
 * (workers/memory-worker.ts): a process killed during one leaves its maintenance job active for
 * that queue's expiry (hours, src/jobs/queue.ts). Returns the entries, their job ids and the
 * queues those jobs are on.
 */
export async function closeAbandonedEntries(
  db: Queryable,
  staleMs: number,
): Promise<{ id: string; job_id: string | null; queue: string | null }[]> {
  const res = await db.query<{ id: string; job_id: string | null; queue: string | null }>(
    `update dream_journal j set status = 'failed', error = 'the worker stopped during it', ended_at = now()
     where j.status = 'dreaming' and (
       exists (select 1 from inference_workers w where w.id = j.worker_id
          and (w.stopped_at is not null or w.heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)))
       or (not exists (select 1 from inference_workers w where w.id = j.worker_id)
          and not exists (select 1 from pgboss.job b where b.id = j.job_id and b.state = 'active')))
     returning j.id, j.job_id, (select b.name from pgboss.job b where b.id = j.job_id) as queue`,
    [staleMs],
  );
  return res.rows;
}

/** What a stranded job needs: its turn moved to a new job, or the job closed as done or as never begun. */
export type StrandedAction = "move" | "complete" | "cancel";

/**
 * Active jobs whose worker died around them (a live worker takes a job up within milliseconds
 * of the fetch, and closes it within milliseconds of the work's end), older than `staleMs`:
 * - a chat whose turn is still queued (the worker died before claiming it): "move";
 * - a chat whose turn has finished, or a reverie whose journal entries have all ended (the
 *   worker died before telling pg-boss): "complete";
 * - a reverie with no journal entry (died before starting it): "cancel".
 * pg-boss would expire them only after the queue's expiry (an hour), and an active job keeps
 * the dream scheduler waiting. Each job's turn (a job has one) is looked up by its job, in
 * migrations/000032_growing_tables.sql's index: joined, or in a lateral subquery the planner
 * could flatten into a join (the limit keeps it apart), the planner read every turn where it had
 * no statistics (the embedded database has no autovacuum), 95-176 ms at 100,000 turns.
 */
export async function strandedJobs(
  db: Queryable,
  queue: string,
  staleMs: number,
): Promise<{ id: string; kind: string; turn_id: string | null; action: StrandedAction }[]> {
  const res = await db.query<{ id: string; kind: string; turn_id: string | null; action: StrandedAction }>(
    `select * from (
       select j.id, j.data->>'kind' as kind, t.id as turn_id,
         case when j.data->>'kind' = 'chat' then
                case when t.status = 'queued' then 'move' when t.status in ('done', 'failed', 'cancelled') then 'complete' end
              when not exists (select 1 from dream_journal d where d.job_id = j.id) then 'cancel'
              when not exists (select 1 from dream_journal d where d.job_id = j.id and d.status = 'dreaming') then 'complete'
         end as action
       from pgboss.job j
         left join lateral (select id, status from turns where job_id = j.id and j.data->>'kind' = 'chat' limit 1) t on true
       where j.name = ${queueLiteral(queue)} and j.state = 'active' and j.started_on < now() - make_interval(secs => $1::float8 / 1000)) s
     where action is not null`,
    [staleMs],
  );
  return res.rows;
}

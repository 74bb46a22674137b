// pg-boss keeps finished jobs in its job table for hours and indexes only waiting ones: the
// questions about running jobs that Psyche asks at every heartbeat, in each dream scheduler's
// look and for /health would read every finished job without Psyche's own index
// (db/sql/pgboss-jobs.ts, indexLiveJobs). Their plans, over a table of finished jobs, use it.
import t from "tap";
import { LIVE_JOBS_INDEX, indexLiveJobs, queueBusy, queueCounts, reverieUnderway, strandedJobs } from "../../src/db/sql/pgboss-jobs.js";
import { INFERENCE_QUEUE } from "../../src/jobs/queue.js";
import { testDatabase } from "../helpers/database.js";
import { explaining, planNodes, scansOf } from "../helpers/plans.js";

t.test("the questions about running jobs read Psyche's index, not every finished job", async (t) => {
  const { pool } = await testDatabase(t);
  // pg-boss made a partition per queue; each has the index, under a name of Postgres's choosing.
  const partitionIndexes = (
    await pool.query<{ name: string }>(
      "select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = to_regclass($1)",
      [`pgboss.${LIVE_JOBS_INDEX}`],
    )
  ).rows.map((r) => r.name);
  const partitions = await pool.query("select count(*)::int as n from pg_inherits where inhparent = 'pgboss.job'::regclass");
  t.equal(partitionIndexes.length, partitions.rows[0].n, "every queue's partition has it");

  await pool.query(
    `insert into pgboss.job (name, data, state, started_on, completed_on)
     select $1, jsonb_build_object('kind', 'chat'), 'completed', now() - interval '1 hour', now() - interval '1 hour'
     from generate_series(1, 5000)`,
    [INFERENCE_QUEUE],
  );
  await pool.query("analyze pgboss.job");
  const { db, plans } = explaining(pool);
  await strandedJobs(db, INFERENCE_QUEUE, 10_000);
  await queueBusy(db, INFERENCE_QUEUE);
  await queueCounts(db, INFERENCE_QUEUE);
  await reverieUnderway(db, INFERENCE_QUEUE);
  t.equal(plans.length, 4);
  const jobPartitions = (
    await pool.query<{ name: string }>(
      "select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'pgboss.job'::regclass",
    )
  ).rows.map((r) => r.name);
  for (const [i, plan] of plans.entries()) {
    const nodes = [...planNodes(plan)];
    t.ok(
      nodes.some((n) => partitionIndexes.includes(n["Index Name"] ?? "")),
      `statement ${i + 1} reads the index`,
    );
    t.same(scansOf(plan, jobPartitions), [], `statement ${i + 1} scans no queue's jobs one by one`);
  }

  t.equal(await queueBusy(pool, INFERENCE_QUEUE), false, "finished jobs are not busy");
  t.same(await strandedJobs(pool, INFERENCE_QUEUE, 100), [], "nor stranded");
});

t.test("made again over one that exists, and by two starts at once, it stays one index", async (t) => {
  const { pool } = await testDatabase(t);
  await Promise.all([indexLiveJobs(pool), indexLiveJobs(pool)]);
  await pool.query(`drop index pgboss.${LIVE_JOBS_INDEX}`);
  await Promise.all([indexLiveJobs(pool), indexLiveJobs(pool)]);
  const res = await pool.query("select count(*)::int as n from pg_indexes where schemaname = 'pgboss' and indexname = $1", [
    LIVE_JOBS_INDEX,
  ]);
  t.equal(res.rows[0].n, 1);
});

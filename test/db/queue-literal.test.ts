// Queue names go into pg-boss statements as literals (db/sql/pgboss-jobs.ts, queueLiteral), so
// Postgres keeps one plan for them: only the names jobs/queue.ts makes get in, quoted.
import t from "tap";
import { completeJobSql, queueLiteral, takeJobSql } from "../../src/db/sql/pgboss-jobs.js";
import { INFERENCE_QUEUE, MAINTENANCE_QUEUE, MEMORY_QUEUE } from "../../src/jobs/queue.js";
import { build, sql } from "../../src/db/statement.js";

t.test("Psyche's queues are quoted as literals", async (t) => {
  for (const queue of [INFERENCE_QUEUE, MEMORY_QUEUE, MAINTENANCE_QUEUE]) t.equal(queueLiteral(queue), `'${queue}'`);
  const id = "00000000-0000-0000-0000-000000000000";
  t.match(build(takeJobSql(INFERENCE_QUEUE, sql`${id}`)).text, `where name = '${INFERENCE_QUEUE}' and id = $1`);
  t.match(build(completeJobSql(MEMORY_QUEUE, sql`${id}`)).text, `where name = '${MEMORY_QUEUE}' and id = $1`);
});

t.test("anything else is refused, never quoted into a statement", async (t) => {
  for (const bad of ["x' or '1'='1", "", "Psyche", "a b", "q;drop table turns", "é"]) {
    t.throws(() => queueLiteral(bad), /not a queue name/, JSON.stringify(bad));
  }
});

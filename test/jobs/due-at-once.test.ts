// A job is due the moment it is sent (jobs/queue.ts, DUE_AT_ONCE): pg-boss takes a job once
// its start_after is before now(), and the embedded database's clock counts whole milliseconds,
// so a job sent and fetched in the same millisecond was not yet there for the fetch (a signalled
// worker then waited for its next poll; test/dreams/dream-resume.test.ts failed in CI so).
import t from "tap";
import { randomUUID } from "node:crypto";
import { DUE_AT_ONCE, INFERENCE_QUEUE, Priority, sendStatement } from "../../src/jobs/queue.js";
import { buildReverie, queueReverie } from "../../src/dreams/queue-reverie.js";
import { defaultDreamSettings } from "../../src/dreams/settings.js";
import { loadConfig } from "../../src/config.js";
import { takeJobSql } from "../../src/db/sql/pgboss-jobs.js";
import { build, sql } from "../../src/db/statement.js";
import { testDatabase } from "../helpers/database.js";

const db = await testDatabase(t);
const { boss, pool, bus } = db;
const ROUNDS = 60;
const settings = defaultDreamSettings(loadConfig({}, {}));

t.test("sent and fetched back to back, every job is there for the fetch", async (t) => {
  let found = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const id = await boss.send(INFERENCE_QUEUE, { kind: "chat", turnId: randomUUID() }, { ...DUE_AT_ONCE, priority: Priority.chat });
    const [fetched] = await boss.fetch(INFERENCE_QUEUE, { batchSize: 1, priority: true });
    if (fetched?.id === id) found++;
    if (fetched) await boss.complete(INFERENCE_QUEUE, fetched.id);
  }
  t.equal(found, ROUNDS);
});

t.test("the queue's own sends: a reverie, and a turn's job inserted as a statement, then taken at once", async (t) => {
  let found = 0;
  for (let i = 0; i < ROUNDS / 2; i++) {
    const reverie = await queueReverie({ boss, bus }, buildReverie(settings, { kind: "dream" }));
    const [fetched] = await boss.fetch(INFERENCE_QUEUE, { batchSize: 1, priority: true });
    if (fetched?.id === reverie) found++;
    if (fetched) await boss.complete(INFERENCE_QUEUE, fetched.id);
    const id = randomUUID();
    const insert = await sendStatement(boss, INFERENCE_QUEUE, { kind: "chat", turnId: randomUUID() }, { id, priority: Priority.chat });
    await pool.query(insert.text, [...insert.values]);
    // The worker's take of a signalled job (db/sql/pgboss-jobs.ts), as pg-boss's fetch takes one.
    const take = build(takeJobSql(INFERENCE_QUEUE, sql`${id}::uuid`));
    const taken = await pool.query<{ id: string }>(take.text, take.values);
    if (taken.rows[0]?.id === id) found++;
    await boss.complete(INFERENCE_QUEUE, id);
  }
  t.equal(found, ROUNDS);
});

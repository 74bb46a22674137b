// A turn's end and its memory job are one statement (src/db/sql/turns.ts, finishTurn): no
// transaction around them, the job is the one pg-boss's own send would have queued, and a turn
// the worker no longer holds, or a job pg-boss does not insert, writes nothing at all.
import t, { type Test } from "tap";
import { randomUUID } from "node:crypto";
import type { Pool } from "../../src/db/pool.js";
import { claimTurn, finishTurn } from "../../src/db/sql/turns.js";
import { startTurn } from "../../src/conversation/start-turn.js";
import { MEMORY_QUEUE, sendStatement } from "../../src/jobs/queue.js";
import { countedPool } from "../helpers/counted-pool.js";
import { startPsyche } from "../helpers/psyche.js";

const request = {
  model: "psyche",
  temperature: null,
  topP: null,
  maxTokens: 4,
  seed: null,
  stop: [],
  stream: false,
  messages: [{ role: "user" as const, content: "hello there" }],
};
const result = { content: "hi back", finishReason: "stop" as const, promptTokens: 5, completionTokens: 2 };
const reply = { role: "assistant" as const, content: "hi back" };

/**
 * The columns of a job that pg-boss works out from its queue and its settings (not its state:
 * the memory worker may have taken it already).
 */
const JOB_COLUMNS = `name, priority, retry_limit, retry_delay, retry_backoff, expire_in::text,
  (keep_until - start_after)::text as kept_for, policy, dead_letter, singleton_key`;

/** A turn running under `workerId` (Psyche's own worker is stopped, so it cannot take it first). */
async function runningTurn(t: Test, psyche: Awaited<ReturnType<typeof startPsyche>>, workerId: string): Promise<string> {
  const { pool, boss, bus } = psyche.db;
  const started = await startTurn({ pool, boss, bus }, request);
  const { job_id } = (await pool.query("select job_id from turns where id = $1", [started.turnId])).rows[0];
  t.ok(await claimTurn(pool, started.turnId, job_id, workerId), "claimed");
  return started.turnId;
}

/** What finishing wrote for `turnId`: its status, reply messages, closing events and memory jobs. */
async function written(pool: Pool, turnId: string) {
  const res = await pool.query(
    `select (select status from turns where id = $1) as status,
            (select count(*)::int from messages where turn_id = $1 and role = 'assistant') as replies,
            (select count(*)::int from turn_events where turn_id = $1 and kind = 'done') as closed,
            (select count(*)::int from pgboss.job where name = $2 and data->>'turnId' = $1::text) as memory_jobs`,
    [turnId, MEMORY_QUEUE],
  );
  return res.rows[0] as { status: string; replies: number; closed: number; memory_jobs: number };
}

t.test("a turn's end and its memory job are one statement, the job as pg-boss's send queues it", async (t) => {
  const psyche = await startPsyche(t, { recallPromptTokens: 0 });
  const { pool, boss } = psyche.db;
  await psyche.worker.stop(1000);
  const workerId = randomUUID();
  const turnId = await runningTurn(t, psyche, workerId);
  const { pool: counted, statements } = countedPool(pool);

  const jobId = randomUUID();
  const job = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId }, { id: jobId });
  const closing = await finishTurn(counted, turnId, workerId, result, reply, job);
  t.same(statements.length, 1, "one statement on the pool, no transaction (a connection of its own) around it");
  t.match(closing, { kind: "done", content: "stop" });
  t.same(await written(pool, turnId), { status: "done", replies: 1, closed: 1, memory_jobs: 1 });

  const ours = (await pool.query(`select ${JOB_COLUMNS}, data from pgboss.job where id = $1`, [jobId])).rows[0];
  t.same(ours.data, { kind: "remember-turn", turnId });
  const sentId = await boss.send(MEMORY_QUEUE, { kind: "remember-turn", turnId: randomUUID() });
  const sent = (await pool.query(`select ${JOB_COLUMNS} from pgboss.job where id = $1`, [sentId])).rows[0];
  const { data: _, ...rest } = ours;
  t.same(rest, sent, "the same retries, expiry and retention as boss.send gives");

  statements.length = 0;
  const again = await finishTurn(counted, turnId, workerId, result, reply);
  t.equal(again, undefined, "without a job (a cancelled turn) too, a turn finished already is not finished again");
  t.equal(statements.length, 1);
});

t.test("a turn the worker no longer holds: no reply, no closing event, no memory job", async (t) => {
  const psyche = await startPsyche(t, { recallPromptTokens: 0 });
  const { pool, boss } = psyche.db;
  await psyche.worker.stop(1000);
  const turnId = await runningTurn(t, psyche, randomUUID());
  const job = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId }, { id: randomUUID() });
  t.equal(await finishTurn(pool, turnId, randomUUID(), result, reply, job), undefined, "another worker's turn: lost");
  t.same(await written(pool, turnId), { status: "running", replies: 0, closed: 0, memory_jobs: 0 });
});

t.test("a memory job pg-boss does not insert: the turn is not finished, and the worker hears why", async (t) => {
  const psyche = await startPsyche(t, { recallPromptTokens: 0 });
  const { pool, boss } = psyche.db;
  await psyche.worker.stop(1000);
  const workerId = randomUUID();
  const turnId = await runningTurn(t, psyche, workerId);
  const taken = await boss.send(MEMORY_QUEUE, { kind: "remember-turn", turnId: randomUUID() });
  // The same id again: pg-boss's insert does nothing on the conflict.
  const job = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId }, { id: taken! });
  await t.rejects(finishTurn(pool, turnId, workerId, result, reply, job), /did not accept the turn's memory job/);
  t.same(await written(pool, turnId), { status: "running", replies: 0, closed: 0, memory_jobs: 0 });
});

// A turn's end and its memory job are one statement (src/db/sql/turns.ts, finishTurn): no
// transaction around them, the job is the one pg-boss's own send would have queued, and a turn
// the worker no longer holds, or a job pg-boss does not insert, writes nothing at all. The job the
// turn was taken with completes in the same statement.
import t, { type Test } from "tap";
import { randomUUID } from "node:crypto";
import type { Pool } from "../../src/db/pool.js";
import { claimTurn, finishTurn, takeQueuedTurn } from "../../src/db/sql/turns.js";
import { openTurn } from "../../src/conversation/open-turn.js";
import { INFERENCE_QUEUE, MEMORY_QUEUE, sendStatement } from "../../src/jobs/queue.js";
import { countedPool } from "../helpers/counted-pool.js";
import { inProcessPsyche } from "../helpers/in-process.js";
import { testDatabase, type TestDatabase, turnDeps, userTurn } from "../helpers/database.js";

const request = userTurn("hello there", { budget: { maxTokens: 4, field: "max_tokens" } });

/** A turn opened and left queued (no worker runs here). */
async function queued(db: Pick<TestDatabase, "pool" | "boss" | "bus">) {
  const started = await openTurn(turnDeps(db), request);
  started.follower.close();
  return started;
}
const result = { content: "hi back", finishReason: "stop" as const, promptTokens: 5, completionTokens: 2 };
const reply = { role: "assistant" as const, content: "hi back" };

/**
 * The columns of a job that pg-boss works out from its queue and its settings (not its state:
 * the memory worker may have taken it already).
 */
const JOB_COLUMNS = `name, priority, retry_limit, retry_delay, retry_backoff, expire_in::text,
  (keep_until - start_after)::text as kept_for, policy, dead_letter, singleton_key`;

/** A turn running under `workerId` (no worker runs here, so none can take it first). */
async function runningTurn(t: Test, db: TestDatabase, workerId: string): Promise<string> {
  const { pool } = db;
  const started = await queued(db);
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

/** One database for the file: each test works on turns and jobs of its own, by id. */
const db = await testDatabase(t);

t.test("a turn's end and its memory job are one statement, the job as pg-boss's send queues it", async (t) => {
  const { pool, boss } = db;
  const workerId = randomUUID();
  const turnId = await runningTurn(t, db, workerId);
  const { pool: counted, statements } = countedPool(pool);

  const jobId = randomUUID();
  const job = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId }, { id: jobId });
  const closing = await finishTurn(counted, turnId, workerId, result, reply, { memoryJob: job });
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
  const { pool, boss } = db;
  const turnId = await runningTurn(t, db, randomUUID());
  const job = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId }, { id: randomUUID() });
  t.equal(await finishTurn(pool, turnId, randomUUID(), result, reply, { memoryJob: job }), undefined, "another worker's turn: lost");
  t.same(await written(pool, turnId), { status: "running", replies: 0, closed: 0, memory_jobs: 0 });
});

t.test("a memory job pg-boss does not insert: the turn is not finished, and the worker hears why", async (t) => {
  const { pool, boss } = db;
  const workerId = randomUUID();
  const turnId = await runningTurn(t, db, workerId);
  const taken = await boss.send(MEMORY_QUEUE, { kind: "remember-turn", turnId: randomUUID() });
  // The same id again: pg-boss's insert does nothing on the conflict.
  const job = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId }, { id: taken! });
  await t.rejects(finishTurn(pool, turnId, workerId, result, reply, { memoryJob: job }), /did not accept the turn's memory job/);
  t.same(await written(pool, turnId), { status: "running", replies: 0, closed: 0, memory_jobs: 0 });
});

t.test("the job the worker took the turn with completes with the turn's end, in the same statement", async (t) => {
  const { pool, boss } = db;
  const jobState = async (id: string) =>
    (await pool.query("select state::text, completed_on from pgboss.job where id = $1", [id])).rows[0] as {
      state: string;
      completed_on: Date | null;
    };
  const take = async (workerId: string) => {
    const started = await queued(db);
    const taken = await takeQueuedTurn(pool, started.turnId, INFERENCE_QUEUE, workerId);
    t.equal((await jobState(taken!.jobId)).state, "active", "taken");
    return { turnId: started.turnId, chatJob: { queue: INFERENCE_QUEUE, id: taken!.jobId } };
  };

  const workerId = randomUUID();
  const mine = await take(workerId);
  const { pool: counted, statements } = countedPool(pool);
  const memoryJob = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId: mine.turnId }, { id: randomUUID() });
  t.match(await finishTurn(counted, mine.turnId, workerId, result, reply, { memoryJob, chatJob: mine.chatJob }), { kind: "done" });
  t.equal(statements.length, 1, "no pg-boss complete after it");
  t.same(await written(pool, mine.turnId), { status: "done", replies: 1, closed: 1, memory_jobs: 1 });
  const done = await jobState(mine.chatJob.id);
  t.equal(done.state, "completed");
  t.ok(done.completed_on, "with its time, as pg-boss's complete writes it");

  const cancelled = await take(workerId);
  const stopped = { ...result, finishReason: "cancelled" as const };
  t.match(await finishTurn(pool, cancelled.turnId, workerId, stopped, reply, { chatJob: cancelled.chatJob }), { kind: "done" });
  t.equal((await jobState(cancelled.chatJob.id)).state, "completed", "a cancelled turn's too (no memory job)");

  const theirs = await take(randomUUID());
  t.equal(await finishTurn(pool, theirs.turnId, workerId, result, reply, { chatJob: theirs.chatJob }), undefined);
  t.equal((await jobState(theirs.chatJob.id)).state, "active", "a turn the worker does not hold: its job is not completed");
});

t.test("through the worker, a chat's job is completed once, with the turn", async (t) => {
  const psyche = await inProcessPsyche(t, { recallPromptTokens: 0 });
  const { pool, boss } = psyche.db;
  let completes = 0;
  const complete = boss.complete.bind(boss);
  boss.complete = ((...args: Parameters<typeof boss.complete>) => {
    if (args[0] === INFERENCE_QUEUE) completes++;
    return complete(...args);
  }) as typeof boss.complete;
  const res = await psyche.request("/v1/chat/completions", {
    body: { model: "psyche", messages: [{ role: "user", content: "hello" }], max_tokens: 4, seed: 1 },
  });
  t.equal(res.status, 200);
  await res.json();
  const turnId = res.headers.get("x-psyche-turn");
  const row = (
    await pool.query("select t.status, j.state::text as job from turns t join pgboss.job j on j.id = t.job_id where t.id = $1", [turnId])
  ).rows[0];
  t.same(row, { status: "done", job: "completed" });
  t.equal(completes, 0, "the worker did not complete it again through pg-boss");
});

t.test("the stream's last text goes in with the turn's end, just before its closing event", async (t) => {
  const { pool, boss } = db;
  const workerId = randomUUID();
  const events = async (turnId: string) =>
    (await pool.query("select seq, kind, content, tokens from turn_events where turn_id = $1 order by seq", [turnId])).rows;

  const turnId = await runningTurn(t, db, workerId);
  // The first token was written as it came (conversation/event-writer.ts); the rest is the tail.
  await pool.query("insert into turn_events (turn_id, seq, kind, content, tokens) values ($1, 1, 'delta', 'hi', 1)", [turnId]);
  const { pool: counted, statements } = countedPool(pool);
  const job = await sendStatement(boss, MEMORY_QUEUE, { kind: "remember-turn", turnId }, { id: randomUUID() });
  const tail = { seq: 2, content: " back", tokens: 1 };
  const closing = await finishTurn(counted, turnId, workerId, result, reply, { memoryJob: job, tail });
  t.equal(statements.length, 1, "one statement");
  t.match(closing, { seq: 3, kind: "done" });
  t.same(await events(turnId), [
    { seq: 1, kind: "delta", content: "hi", tokens: 1 },
    { seq: 2, kind: "delta", content: " back", tokens: 1 },
    { seq: 3, kind: "done", content: "stop", tokens: 0 },
  ]);

  const theirs = await runningTurn(t, db, randomUUID());
  t.equal(await finishTurn(pool, theirs, workerId, result, reply, { tail: { seq: 1, content: "x", tokens: 1 } }), undefined);
  t.same(await events(theirs), [], "a turn the worker no longer holds gets no tail either");
});

// A worker killed around a job (found by the soak, bench/soak/): fetched but not taken up, the
// chat's turn stayed queued behind an active job that pg-boss would expire only after an hour;
// done but not completed, the job stayed active and kept dreams away. Reclaim moves such a turn
// to a new job, cancels a reverie never begun, completes what was done; a fresh fetch and a
// dream still being written are left alone.
import t, { type Test } from "tap";
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { closeAbandonedReveries, reclaimOrphanedTurns } from "../../src/jobs/reclaim.js";
import { INFERENCE_QUEUE, MAINTENANCE_QUEUE, Priority } from "../../src/jobs/queue.js";
import { createLogger } from "../../src/log.js";
import { openTurn } from "../../src/conversation/open-turn.js";
import { testDatabase, turnDeps, userTurn } from "../helpers/database.js";
import { claimTurn } from "../../src/db/sql/turns.js";

/** A database with no worker, reclaim's deps, and a chat left queued (its turn id). */
async function withoutWorker(t: Test) {
  const db = await testDatabase(t);
  const { pool, boss, bus } = db;
  const deps = { pool, boss, bus, log: createLogger("silent"), workerId: randomUUID(), host: hostname() };
  const turn = await openTurn(turnDeps(db), userTurn("hi", { budget: { maxTokens: 4, field: "max_tokens" }, stream: true }));
  turn.follower.close();
  return { pool, boss, deps, turnId: turn.turnId };
}

t.test("a stranded chat job is replaced and its turn taken up; a stranded reverie is cancelled", async (t) => {
  const { pool, boss, deps, turnId } = await withoutWorker(t);
  // The "dead" worker: it fetched the chat, then nothing.
  const [fetched] = await boss.fetch(INFERENCE_QUEUE);
  t.equal(fetched!.id, (await pool.query("select job_id from turns where id = $1", [turnId])).rows[0].job_id);
  const dreamJob = await boss.send(INFERENCE_QUEUE, { kind: "dream", maxTokens: 8 }, { priority: Priority.dream });
  const [fetchedDream] = await boss.fetch(INFERENCE_QUEUE);
  t.equal(fetchedDream!.id, dreamJob);

  t.same(await reclaimOrphanedTurns({ ...deps, staleMs: 60_000 }), [], "a fetch younger than the stale limit is a live worker's");
  await new Promise((r) => setTimeout(r, 300));
  t.same(await reclaimOrphanedTurns({ ...deps, staleMs: 100 }), [turnId], "the turn is moved");
  const turn = (await pool.query("select status, job_id from turns where id = $1", [turnId])).rows[0];
  t.equal(turn.status, "queued");
  t.not(turn.job_id, fetched!.id, "to a new job");
  const states = await pool.query("select id, state::text from pgboss.job where id = any($1::uuid[])", [
    [fetched!.id, dreamJob, turn.job_id],
  ]);
  const state = Object.fromEntries(states.rows.map((r) => [r.id, r.state]));
  t.same(state, { [fetched!.id]: "cancelled", [dreamJob!]: "cancelled", [turn.job_id]: "created" });
  t.same(await reclaimOrphanedTurns({ ...deps, staleMs: 100 }), [], "once");

  // The next worker's fetch gets the new job, and with it the turn.
  const [next] = await boss.fetch(INFERENCE_QUEUE);
  t.equal(next!.id, turn.job_id);
  t.ok(await claimTurn(pool, turnId, next!.id, deps.workerId), "the turn is claimed with the new job");
});

t.test("a job whose work was done but never completed is completed", async (t) => {
  const { pool, boss, deps: base, turnId } = await withoutWorker(t);
  const deps = { ...base, staleMs: 100 };
  const [chat] = await boss.fetch(INFERENCE_QUEUE);
  // The worker finished the turn and died before telling pg-boss.
  await pool.query("update turns set status = 'done', finished_at = now() where id = $1", [turnId]);
  const dreamJob = await boss.send(INFERENCE_QUEUE, { kind: "dream", maxTokens: 8 }, { priority: Priority.dream });
  await boss.fetch(INFERENCE_QUEUE);
  await pool.query("insert into dream_journal (id, kind, job_id, model, status) values (gen_random_uuid(), 'dream', $1, 'tiny', 'done')", [
    dreamJob,
  ]);
  const running = await boss.send(INFERENCE_QUEUE, { kind: "dream", maxTokens: 8 }, { priority: Priority.dream });
  await boss.fetch(INFERENCE_QUEUE);
  await pool.query(
    "insert into dream_journal (id, kind, job_id, model, status) values (gen_random_uuid(), 'dream', $1, 'tiny', 'dreaming')",
    [running],
  );
  await new Promise((r) => setTimeout(r, 300));
  t.same(await reclaimOrphanedTurns(deps), [], "no turn moves");
  const states = await pool.query("select id, state::text from pgboss.job where id = any($1::uuid[])", [[chat!.id, dreamJob, running]]);
  t.same(
    Object.fromEntries(states.rows.map((r) => [r.id, r.state])),
    { [chat!.id]: "completed", [dreamJob!]: "completed", [running!]: "active" },
    "a dream still being written is left to its worker",
  );
});

t.test("a reverie left open by a worker that stopped is closed, and its job cancelled; with none dreamt, one question", async (t) => {
  const { pool, boss, deps: base } = await withoutWorker(t);
  const statements: string[] = [];
  const counted = {
    query: (...args: unknown[]) => {
      statements.push(String(args[0]));
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    },
    connect: () => {
      statements.push("connect");
      return pool.connect();
    },
  } as unknown as typeof pool;
  const deps = { ...base, pool: counted, staleMs: 100 };
  t.same(await closeAbandonedReveries(deps), []);
  t.same(
    statements.map((s) => (s === "connect" ? s : "query")),
    ["query"],
    "nothing dreamt: one question on the pool, no transaction",
  );

  const job = await boss.send(INFERENCE_QUEUE, { kind: "dream", maxTokens: 8 }, { priority: Priority.dream });
  await boss.fetch(INFERENCE_QUEUE);
  await boss.fetch(INFERENCE_QUEUE);
  const stopped = randomUUID();
  await pool.query(
    "insert into inference_workers (id, host, pid, model, started_at, heartbeat_at, stopped_at) values ($1, 'h', 1, 'tiny', now(), now(), now())",
    [stopped],
  );
  const entry = (
    await pool.query(
      "insert into dream_journal (id, kind, job_id, model, status, worker_id) values (gen_random_uuid(), 'dream', $1, 'tiny', 'dreaming', $2) returning id",
      [job, stopped],
    )
  ).rows[0].id;
  t.same(await closeAbandonedReveries(deps), [entry], "the stopped worker's entry is closed");
  const closed = (await pool.query("select status, error from dream_journal where id = $1", [entry])).rows[0];
  t.same(closed, { status: "failed", error: "the worker stopped during it" });
  const state = (await pool.query("select state::text from pgboss.job where id = $1", [job])).rows[0].state;
  t.equal(state, "cancelled", "with its job");
});

t.test("a consolidation its process died in is closed by the worker's heartbeat, and its maintenance job cancelled", async (t) => {
  // The memory worker runs beside the inference worker and names it (src/processes/roles.ts);
  // the maintenance queue keeps an active job for hours (src/jobs/queue.ts), so the job alone
  // could not say the process is gone.
  const { pool, boss, deps: base } = await withoutWorker(t);
  const deps = { ...base, staleMs: 1000 };
  const worker = (heartbeatAgo: string) =>
    pool
      .query(
        `insert into inference_workers (id, host, pid, model, started_at, heartbeat_at)
         values (gen_random_uuid(), 'h', 1, 'tiny', now(), now() - $1::interval) returning id`,
        [heartbeatAgo],
      )
      .then((r) => r.rows[0].id as string);
  const [dead, live] = [await worker("1 minute"), await worker("0 seconds")];
  const consolidation = async (workerId: string) => {
    const job = await boss.send(MAINTENANCE_QUEUE, { kind: "tick" });
    const [fetched] = await boss.fetch(MAINTENANCE_QUEUE);
    t.equal(fetched!.id, job);
    const entry = (
      await pool.query(
        "insert into dream_journal (id, kind, job_id, model, status, worker_id) values (gen_random_uuid(), 'consolidate', $1, 'lexical', 'dreaming', $2) returning id",
        [job, workerId],
      )
    ).rows[0].id as string;
    return { job: job!, entry };
  };
  const died = await consolidation(dead);
  const running = await consolidation(live);
  const unregistered = await consolidation(randomUUID());
  t.same(await closeAbandonedReveries(deps), [died.entry], "only the one whose worker's heartbeat is stale");
  const entries = await pool.query("select id, status from dream_journal where id = any($1::uuid[])", [
    [died.entry, running.entry, unregistered.entry],
  ]);
  t.same(
    Object.fromEntries(entries.rows.map((r) => [r.id, r.status])),
    { [died.entry]: "failed", [running.entry]: "dreaming", [unregistered.entry]: "dreaming" },
    "a live worker's, and one whose worker has not registered yet while its job runs, are left",
  );
  const states = await pool.query("select id, state::text from pgboss.job where id = any($1::uuid[])", [[died.job, running.job]]);
  t.same(
    Object.fromEntries(states.rows.map((r) => [r.id, r.state])),
    { [died.job]: "cancelled", [running.job]: "active" },
    "the dead one's maintenance job is cancelled on its own queue",
  );
});

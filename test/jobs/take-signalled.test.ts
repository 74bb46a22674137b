// A chat signalled while nothing else waits is taken by its turn's id, with its claim, in one
// statement (db/sql/turns.ts, takeQueuedTurn; workers/inference-worker.ts): what it takes, what
// it leaves for pg-boss's fetch, that a worker takes such chats without fetching, and that it
// fetches what waits beyond the chats it takes.
import t, { type Test } from "tap";
import { randomUUID } from "node:crypto";
import { INFERENCE_QUEUE, Priority } from "../../src/jobs/queue.js";
import { takeQueuedTurn } from "../../src/db/sql/turns.js";
import { inProcessPsyche, type InProcessPsyche } from "../helpers/in-process.js";
import { testDatabase, turnDeps, userTurn } from "../helpers/database.js";
import { openTurn } from "../../src/conversation/open-turn.js";
import { Channel } from "../../src/jobs/bus.js";
import { DREAM_SIGNAL } from "../../src/dreams/dream.js";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";

const chat = (psyche: InProcessPsyche, content: string, extra: object = {}) =>
  psyche.request("/v1/chat/completions", {
    body: { model: "psyche", messages: [{ role: "user", content }], max_tokens: 4, seed: 1, ...extra },
  });

/** Counts the worker's fetches of the inference queue (the memory worker fetches its own with the same pg-boss). */
function countFetches(t: Test, boss: InProcessPsyche["db"]["boss"]) {
  const counted = { fetches: 0 };
  const fetchOriginal = boss.fetch.bind(boss);
  boss.fetch = ((...args: Parameters<typeof boss.fetch>) => {
    if (args[0] === INFERENCE_QUEUE) counted.fetches++;
    return fetchOriginal(...args);
  }) as typeof boss.fetch;
  t.teardown(() => {
    boss.fetch = fetchOriginal;
  });
  return counted;
}

/** One database with no worker, for the tests that take turns themselves. */
const db = await testDatabase(t);

/** A chat left queued: its turn id and job id. */
async function queuedChat() {
  const turn = await openTurn(turnDeps(db), userTurn("hello there", { stream: true }));
  turn.follower.close();
  const turnId = turn.turnId;
  const { pool, boss } = db;
  const jobId: string = (await pool.query("select job_id from turns where id = $1", [turnId])).rows[0].job_id;
  return { pool, boss, turnId, jobId };
}

const jobState = async (pool: Awaited<ReturnType<typeof queuedChat>>["pool"], id: string) =>
  (await pool.query("select state::text, started_on, retry_count from pgboss.job where id = $1", [id])).rows[0];

t.test("a queued turn is taken with its job and claimed, once", async (t) => {
  const { pool, boss, turnId, jobId } = await queuedChat();
  const workerId = randomUUID();
  const taken = await takeQueuedTurn(pool, turnId, INFERENCE_QUEUE, workerId);
  t.equal(taken?.jobId, jobId, "the turn's own job");
  t.equal(taken?.turn?.id, turnId);
  t.equal(taken?.turn?.status, "running");
  t.equal(taken?.turn?.worker_id, workerId);
  t.equal(taken?.turn?.attempts, 1);
  t.same(
    taken?.turn?.prompt_messages.map((m) => [m.role, m.content]),
    [["user", "hello there"]],
    "with its transcript",
  );
  const job = await jobState(pool, jobId);
  t.equal(job.state, "active");
  t.ok(job.started_on, "started, as pg-boss's fetch marks it");
  t.equal(job.retry_count, 0);
  t.equal(await takeQueuedTurn(pool, turnId, INFERENCE_QUEUE, randomUUID()), undefined, "a second worker gets nothing");
  t.same(await boss.fetch(INFERENCE_QUEUE), [], "nor does pg-boss's fetch");
});

t.test("a turn no longer queued, or a job not yet due, is left to pg-boss", async (t) => {
  const { pool, boss, turnId, jobId } = await queuedChat();
  await pool.query("update pgboss.job set start_after = now() + interval '1 hour' where id = $1", [jobId]);
  t.equal(await takeQueuedTurn(pool, turnId, INFERENCE_QUEUE, randomUUID()), undefined, "a retry's wait is kept");
  t.equal((await jobState(pool, jobId)).state, "created");
  t.equal((await pool.query("select status from turns where id = $1", [turnId])).rows[0].status, "queued", "the turn untouched");

  await pool.query("update pgboss.job set start_after = now() where id = $1", [jobId]);
  await pool.query("update turns set status = 'cancelled' where id = $1", [turnId]);
  t.equal(await takeQueuedTurn(pool, turnId, INFERENCE_QUEUE, randomUUID()), undefined, "a cancelled turn is not taken");
  t.equal((await jobState(pool, jobId)).state, "created", "its job waits for a fetch, which completes it");
  t.equal(await takeQueuedTurn(pool, randomUUID(), INFERENCE_QUEUE, randomUUID()), undefined, "an unknown turn: nothing");
  const [fetched] = await boss.fetch(INFERENCE_QUEUE);
  t.equal(fetched?.id, jobId);
});

t.test("the worker takes signalled chats without a fetch, and fetches for a signal that names no turn", async (t) => {
  // Polls far apart: every fetch counted here is one the worker chose, not the safety net's.
  const psyche = await inProcessPsyche(
    t,
    { recallPromptTokens: 0, pollMs: 60_000 },
    { engine: new ScriptedEngine(() => ({ text: "ok" }), 4), handOff: false },
  );
  const { boss, pool } = psyche.db;
  await chat(psyche, "warm up").then((r) => r.json());
  const counted = countFetches(t, boss);

  for (const content of ["one", "two", "three"]) {
    const res = await chat(psyche, content);
    t.equal(res.status, 200);
    t.equal(((await res.json()) as { object: string }).object, "chat.completion");
  }
  const three = await Promise.all(["four", "five", "six"].map((c) => chat(psyche, c).then((r) => r.status)));
  t.same(three, [200, 200, 200], "three at once, fewer than the slots");
  t.equal(counted.fetches, 0, "one at a time and three at once: taken by their signals");

  // A reverie has no turn: its signal makes the worker fetch.
  const before = counted.fetches;
  await boss.send(INFERENCE_QUEUE, { kind: "dream", maxTokens: 4 }, { priority: Priority.dream });
  psyche.db.bus.notify(Channel.jobs, DREAM_SIGNAL);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && counted.fetches === before) await new Promise((r) => setTimeout(r, 50));
  t.ok(counted.fetches > before, "a signal that names no turn is fetched");
  const open = await pool.query("select count(*)::int as n from turns where status in ('queued', 'running')");
  t.equal(open.rows[0].n, 0, "no chat left waiting");
});

/**
 * The tiny model answers four tokens faster than twelve requests arrive, so whether twelve ever
 * wait at once was the machine's timing. Here every chat's generation waits until all twelve
 * are in: the worker holds as many as it takes, the rest wait in the queue, and only a fetch
 * finds them once chats end. The worker's logic is under test; the engine is scripted.
 */
class GatedEngine extends ScriptedEngine {
  private opened!: () => void;
  readonly gate = new Promise<void>((resolve) => (this.opened = resolve));

  constructor() {
    super(() => ({ text: "ok" }), 4);
  }

  open(): void {
    this.opened();
  }

  override async generate(request: GenerateRequest): Promise<GenerateResult> {
    await this.gate;
    return super.generate(request);
  }
}

t.test("more chats than the worker takes: it holds twice its slots, and fetches the rest as chats end", async (t) => {
  const engine = new GatedEngine();
  t.teardown(() => engine.open());
  const psyche = await inProcessPsyche(t, { recallPromptTokens: 0, pollMs: 60_000 }, { engine });
  const { boss, pool } = psyche.db;
  const counted = countFetches(t, boss);

  const twelve = Promise.all("abcdefghijkl".split("").map((c) => chat(psyche, c).then((r) => r.status)));
  const held = async () =>
    (
      await pool.query<{ running: number; queued: number }>(
        `select count(*) filter (where status = 'running')::int as running,
                count(*) filter (where status = 'queued')::int as queued from turns`,
      )
    ).rows[0]!;
  const deadline = Date.now() + 30_000;
  let now = await held();
  // All twelve stored, and the worker as full as it will get (it takes no more while none ends).
  while (Date.now() < deadline && (now.running + now.queued < 12 || now.running < 8)) {
    await new Promise((r) => setTimeout(r, 50));
    now = await held();
  }
  t.same(now, { running: 8, queued: 4 }, "twice the four slots taken, four left in the queue");
  const before = counted.fetches;

  engine.open();
  t.same(await twelve, Array(12).fill(200), "every one answered");
  t.ok(counted.fetches > before, "the four left were fetched once chats ended");
  const open = await pool.query("select count(*)::int as n from turns where status in ('queued', 'running')");
  t.equal(open.rows[0].n, 0, "no chat left waiting");
});

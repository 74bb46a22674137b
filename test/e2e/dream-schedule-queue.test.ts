// The scheduler, continued (test/e2e/dream-schedule.test.ts has the first part; split to stay within
// tap's time per file on a loaded machine): idle thoughts, and a queued chat before a queued dream.
import t from "tap";
import OpenAI from "openai";
import { join } from "node:path";
import { until } from "../helpers/until.js";
import { serverDir } from "../helpers/testdir.js";
import { TINY_SHAPE, writeRandomModel } from "../../src/inference/random-model.js";
import { startPsyche } from "../helpers/psyche.js";
import { INFERENCE_QUEUE, Priority } from "../../src/jobs/queue.js";
import { putBack, waitingAbove } from "../../src/db/sql/pgboss-jobs.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test("an idle thought: once per quiet spell in an open conversation (a client-named one), at idle-thought priority", async (t) => {
  const psyche = await startPsyche(t, { recallPromptTokens: 0, dreamDelaySeconds: 120, wakeLockSeconds: 0 });
  const pool = psyche.db.pool;
  const patched = await fetch(`${psyche.url}/dream/config`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ idle_thought_delay_seconds: 1, reflection_threshold: 0 }),
  });
  t.equal(patched.status, 200);
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  // A client-chosen id, not a UUID: the idle-thought job must take it as the chat API does.
  await client.chat.completions.create(
    { model: "psyche", messages: [{ role: "user", content: "Tell me about the sea" }], max_tokens: 4 },
    { headers: { "X-Psyche-Conversation": "conv-1" } },
  );
  const turn = (await pool.query("select id, conversation_id, finished_at from turns order by created_at desc limit 1")).rows[0];
  t.equal(turn.conversation_id, "conv-1");
  const thought = await until("an idle thought", async () => (await pool.query("select * from dream_journal where kind = 'idle'")).rows[0]);
  t.equal(thought.focus, `conversation ${turn.conversation_id}`);
  t.ok(thought.started_at.getTime() - turn.finished_at.getTime() >= 900, "after the idle delay");
  const job = await pool.query("select priority, data from pgboss.job where id = $1", [thought.job_id]);
  t.match(job.rows[0], { priority: 30, data: { kind: "idle", conversationId: turn.conversation_id, maxTokens: 64 } });
  const fromTurns = (await pool.query("select id from memories where source_kind = 'turn' and source_id = $1", [turn.id])).rows.map(
    (r) => r.id,
  );
  t.ok(
    thought.seed_memory_ids.every((id: string) => fromTurns.includes(id)),
    "it turns over the conversation's own memories",
  );
  await until("the thought to end", async () =>
    (await pool.query("select status from dream_journal where id = $1", [thought.id])).rows[0].status !== "dreaming" ? true : undefined,
  );
  await sleep(2000);
  t.equal(
    (await pool.query("select count(*)::int as n from dream_journal where kind = 'idle'")).rows[0].n,
    1,
    "one thought per quiet spell",
  );
  // Before the dream delay, a dream comes only as a share of the model's time (below).
  const dreams = await pool.query("select j.data from dream_journal d join pgboss.job j on j.id = d.job_id where d.kind = 'dream'");
  t.ok(
    dreams.rows.every((r) => typeof r.data.sliceSeconds === "number" && r.data.sliceSeconds <= 6),
    `no dream before the dream delay but within the budget's share: ${JSON.stringify(dreams.rows.map((r) => r.data.sliceSeconds))}`,
  );
  t.match(
    (await pool.query("select status from dream_journal where id = $1", [thought.id])).rows[0],
    { status: /^(done|interrupted)$/ },
    "the thought ran",
  );
  const failed = await pool.query("select count(*)::int as n from pgboss.job where name = 'psyche-inference' and state = 'failed'");
  t.equal(failed.rows[0].n, 0, "no job failed on the named conversation");
});

t.test("between chats, dreams take the budget's share of the model's time and no more, continuing one dream", async (t) => {
  // Never asleep (a 120 s delay): whatever runs, runs within the share, 30% of 10 s. The tiny
  // model would end most dreams by itself within a share; this one never does, so each is cut.
  const model = join(serverDir(t, "model"), "never-ends.gguf");
  writeRandomModel(model, { ...TINY_SHAPE, name: "psyche-tiny-never-ends", endOfTurnBias: -30 });
  const psyche = await startPsyche(t, {
    model,
    recallPromptTokens: 0,
    dreamDelaySeconds: 120,
    wakeLockSeconds: 0,
    dreamCooldownSeconds: 0,
    dreamBudget: 0.3,
    dreamBudgetWindowSeconds: 10,
    contextSize: 16384,
    dreamMaxTokens: 8192,
  });
  const pool = psyche.db.pool;
  const patched = await fetch(`${psyche.url}/dream/config`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ idle_thought_delay_seconds: 1, idle_thoughts: false, reflection_threshold: 0 }),
  });
  t.equal(patched.status, 200);
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
  const from = Date.now();
  await until(
    "a second stretch of dreaming",
    async () => ((await pool.query("select count(*)::int as n from dream_slices")).rows[0].n >= 2 ? true : undefined),
    40_000,
  );
  await sleep(1000);
  const slices = (
    await pool.query<{ s: number; e: number; journal_id: string }>(
      `select extract(epoch from s.started_at)::float8 * 1000 as s, extract(epoch from coalesce(s.ended_at, now()))::float8 * 1000 as e, s.journal_id
         from dream_slices s order by s.started_at`,
    )
  ).rows;
  t.ok(slices[0]!.s - from >= 900, "the first after the idle delay");
  // The most any 10 s window held: windows ending at each stretch's end are the worst.
  const most = Math.max(
    ...slices.map((w) => slices.reduce((sum, x) => sum + Math.max(0, Math.min(x.e, w.e) - Math.max(x.s, w.e - 10_000)), 0)),
  );
  t.ok(most <= 3000 + 400, `at most the share in any window: ${Math.round(most)} ms of 10 s`);
  t.ok(most >= 1500, `and the share was used: ${Math.round(most)} ms`);
  // This model never ends a dream by itself: each stretch is cut by the share, and a later one
  // goes on with the same dream (its resumes) rather than beginning another.
  const journal = async () =>
    (await pool.query("select status, resumes, tokens from dream_journal where kind = 'dream' order by started_at")).rows;
  const entries = await until(
    "a dream cut by its share to go on",
    async () => {
      const rows = await journal();
      return rows.some((e) => e.resumes >= 1) ? rows : undefined;
    },
    30_000,
    async () => JSON.stringify(await journal()),
  );
  t.comment(JSON.stringify(entries));
  t.ok(
    entries.some((e) => e.resumes >= 1 && e.tokens > 0),
    "a dream cut by its share went on in its next one",
  );
});

t.test("no dream while a chat waits: a queued chat runs before a queued dream; a fetched dream goes back", async (t) => {
  // One slot: a long chat keeps the worker's only slot busy while the queue is arranged (with
  // more, the next chat would run beside it; test/e2e/parallel-chats.test.ts has that case),
  // and a short one its line.
  const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 4000, parallel: 1 });
  const pool = psyche.db.pool;
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const long = client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "a long story" }], max_tokens: 3000 });
  await until("the long chat to run", async () =>
    (await pool.query("select 1 from turns where status = 'running'")).rows[0] ? true : undefined,
  );
  // The worker takes one more chat than its slot, to wait in line (workers/inference-worker.ts):
  // this one fills the line, so that the next stays in the queue.
  const inLine = client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "in line" }], max_tokens: 4 });
  await until("the line to fill", async () =>
    (await pool.query("select count(*)::int as n from turns where status = 'running'")).rows[0].n === 2 ? true : undefined,
  );
  const dreamId = await psyche.db.boss.send(
    INFERENCE_QUEUE,
    { kind: "dream", focus: null, maxTokens: 16 },
    { priority: Priority.dream, retryLimit: 0 },
  );
  // Take the dream as the worker would, then let a chat arrive: it outranks the dream, which goes back.
  const [fetched] = await psyche.db.boss.fetch<unknown>(INFERENCE_QUEUE, { batchSize: 1, priority: true });
  t.equal(fetched?.id, dreamId, "the dream was the next job");
  t.notOk(await waitingAbove(pool, INFERENCE_QUEUE, Priority.dream), "nothing outranks it yet");
  const waiting = client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "me first" }], max_tokens: 4 });
  await until("the second chat to be queued", async () =>
    (await pool.query("select 1 from turns where status = 'queued'")).rows[0] ? true : undefined,
  );
  t.ok(await waitingAbove(pool, INFERENCE_QUEUE, Priority.dream), "a waiting chat outranks it");
  await putBack(pool, INFERENCE_QUEUE, dreamId!);
  t.equal((await pool.query("select state::text from pgboss.job where id = $1", [dreamId])).rows[0].state, "created", "back in the queue");
  await long;
  await inLine;
  await waiting;
  const dream = await until(
    "the dream",
    async () => (await pool.query("select * from dream_journal where job_id = $1 and status <> 'dreaming'", [dreamId])).rows[0],
  );
  const second = (await pool.query("select finished_at from turns order by created_at desc limit 1")).rows[0];
  t.ok(dream.started_at.getTime() >= second.finished_at.getTime(), "the dream started after the waiting chat finished");
  t.equal(dream.status, "done", "and was not woken");
});

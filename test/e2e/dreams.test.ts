/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Dreams on the real stack and the tiny model: a queued dream runs on its own sequence and is
// journaled; a chat that arrives mid-dream wakes it at the next token, the journal keeps the
// partial dream, and the chat completes.
import t from "tap";
import OpenAI from "openai";
import { until } from "../helpers/until.js";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const post = async (path: string, body: unknown) => {
  const res = await fetch(`${psyche.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const journal = async (jobId: string) => (await psyche.db.pool.query("select * from dream_journal where job_id = $1", [jobId])).rows[0];

t.test("a reverie that says nothing still finishes: significance 0, no affect, its event, no memory", async (t) => {
  // No memories yet: the reflection has nothing to reflect on and ends at once with no text.
  const queued = await post("/dream/jobs", { kind: "reflect", max_tokens: 24 });
  t.equal(queued.status, 202);
  const id = queued.body.data[0].id;
  const row = await until("the empty reflection to be scored", async () => {
    const r = await journal(id);
    return r?.significance !== null && r?.significance !== undefined ? r : undefined;
  });
  t.match(row, { status: "done", content: "", significance: 0, valence: null, arousal: null });
  const finished = await psyche.db.pool.query("select data from events where type = 'reverie.finished' and data->>'journal_id' = $1", [
    row.id,
  ]);
  t.match(finished.rows, [{ data: { became_memory: false, significance: 0 } }], "one reverie.finished event");
  const moved = await psyche.db.pool.query("select count(*)::int as n from emotion_log where cause = 'dream' and source_id = $1", [row.id]);
  t.equal(moved.rows[0].n, 0, "the mood is left alone");
});

t.test("a dream runs to its budget and is journaled; it moves the mood", async (t) => {
  await psyche.mem.memory.remember({ kind: "semantic", content: "The garden was full of sunflowers this summer", sourceKind: "api" });
  const queued = await post("/dream/jobs", { kind: "dream", max_tokens: 40, focus: "the garden" });
  t.equal(queued.status, 202);
  const id = queued.body.data[0].id;
  const row = await until("the dream to end", async () => {
    const r = await journal(id);
    return r?.status === "done" ? r : undefined;
  });
  t.match(row, { status: "done", was_interrupted: false, tokens: 40, focus: "the garden", model: "tiny", wake_latency_ms: null });
  t.ok(row.content.length > 0);
  t.equal(row.seed_memory_ids.length, 1, "seeded with the one memory there is");
  const scored = await until("the dream's significance", async () => (await journal(id))?.significance ?? undefined);
  t.type(scored, "number");
  const mood = await until(
    "the dream's mood change",
    async () => (await psyche.db.pool.query("select 1 from emotion_log where cause = 'dream' and source_id = $1", [row.id])).rows[0],
  );
  t.ok(mood);
  const listed = (await (await fetch(`${psyche.url}/dream/journal?limit=5`)).json()) as any;
  t.equal(listed.data[0].id, row.id);
});

t.test("a chat wakes a dream at its next token; the partial dream is kept; the chat completes", async (t) => {
  // The random model now and then ends a dream itself; one that ended before the chat came
  // tests nothing and is tried again (at most 4 times).
  for (let trial = 1; trial <= 4; trial++) {
    const queued = await post("/dream/jobs", { kind: "dream", max_tokens: 3000 });
    const id = queued.body.data[0].id;
    await until("the dream to start", async () => (await journal(id))?.status === "dreaming" || undefined);
    await new Promise((r) => setTimeout(r, 300));
    const chat = await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "wake up" }], max_tokens: 8 });
    t.equal(chat.choices[0]!.finish_reason, "length", "the chat completed");
    const row = await until("the journal entry", async () => {
      const r = await journal(id);
      return r && r.status !== "dreaming" ? r : undefined;
    });
    if (row.status === "done" && row.tokens < 3000 && trial < 4) continue;
    t.equal(row.status, "paused", "paused, to be continued");
    t.equal(row.was_interrupted, true);
    t.ok(row.tokens > 0 && row.tokens < 3000, `dreamt ${row.tokens} tokens before waking`);
    t.ok(row.content.length > 0, "the partial dream is kept");
    t.ok(row.wake_latency_ms >= 0 && row.wake_latency_ms < 1000, `woke in ${row.wake_latency_ms} ms`);
    const job = await psyche.db.pool.query("select state from pgboss.job where id = $1", [id]);
    t.equal(job.rows[0].state, "completed", "a paused dream is not retried: a later dream continues it");
    break;
  }
});

t.test("status follows the dream; POST /dream/wake wakes it", async (t) => {
  const status = async () => (await (await fetch(`${psyche.url}/dream/status`)).json()) as any;
  t.equal((await status()).state, "awake", "a chat just ended");
  const queued = await post("/dream/jobs", { kind: "dream", max_tokens: 3000, focus: "sunflowers" });
  const id = queued.body.data[0].id;
  await until("the dream to start", async () => (await journal(id))?.status === "dreaming" || undefined);
  t.match(await status(), { state: "dreaming", focus: "sunflowers", dream_id: String });
  const woke = await post("/dream/wake", {});
  t.match(woke.body, { was: "dreaming" });
  const row = await until("the dream to stop", async () => {
    const r = await journal(id);
    return r && r.status !== "dreaming" ? r : undefined;
  });
  t.equal(row.status, "paused");
  t.ok(row.wake_latency_ms < 1000);
  t.not((await status()).state, "dreaming");
});

t.test("the journal views", async (t) => {
  const q = async (sql: string) => (await psyche.db.pool.query(sql)).rows;
  const recent = await q("select status, excerpt from dream_recent");
  t.ok(recent.length >= 3);
  t.ok((await q("select kept from dream_interrupted")).length >= 2);
  const days = await q("select dreams, interrupted from dreams_per_day");
  t.ok(days[0].dreams >= 3 && days[0].interrupted >= 2);
  const [seed] = await q("select id from memories where content like 'The garden%'");
  await psyche.mem.memory.remember({
    kind: "insight",
    content: "Summers in the garden make me glad",
    sourceKind: "dream",
    citations: [seed.id],
  });
  const insights = await q("select insight, source from insights_with_sources where insight like 'Summers%'");
  t.same(insights, [{ insight: "Summers in the garden make me glad", source: "The garden was full of sunflowers this summer" }]);
});

t.test("bad dream requests: OpenAI's error shape, nothing queued", async (t) => {
  const before = (
    await psyche.db.pool.query("select count(*)::int as n from pgboss.job where name like 'psyche-%' and data->>'kind' <> 'tick'")
  ).rows[0].n;
  for (const body of [
    { kind: "nap" },
    { kind: "dream", count: 0 },
    { kind: "dream", count: 21 },
    { kind: "dream", max_tokens: -1 },
    { kind: "dream", extra: 1 },
  ]) {
    const res = await post("/dream/jobs", body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.body.error, { type: "invalid_request_error", message: String });
  }
  t.equal((await fetch(`${psyche.url}/dream/journal?limit=0`)).status, 400);
  t.equal(
    (await psyche.db.pool.query("select count(*)::int as n from pgboss.job where name like 'psyche-%' and data->>'kind' <> 'tick'")).rows[0]
      .n,
    before,
  );
});

t.test("a dead worker's open journal entry is closed, and its job, so dreaming can go on", async (t) => {
  const pool = psyche.db.pool;
  const dead = "00000000-0000-4000-8000-00000000dead";
  await pool.query("insert into inference_workers (id, host, pid, model, stopped_at) values ($1, 'elsewhere', 1, 'tiny', now())", [dead]);
  const jobId = await psyche.db.boss.send(
    "psyche-inference",
    { kind: "dream", focus: null, maxTokens: 16 },
    { priority: 20, retryLimit: 0, startAfter: 3600 },
  );
  await pool.query("update pgboss.job set state = 'active', started_on = now() where id = $1", [jobId]);
  const entry = "00000000-0000-4000-8000-0000000000e1";
  await pool.query("insert into dream_journal (id, job_id, model, worker_id) values ($1, $2, 'tiny', $3)", [entry, jobId, dead]);
  // It looks like a dream, unless the live worker's sweep (every heartbeat) has closed it already.
  const looks = (await (await fetch(`${psyche.url}/dream/status`)).json()) as any;
  const swept = (await pool.query("select status from dream_journal where id = $1", [entry])).rows[0].status !== "dreaming";
  t.ok(looks.state === "dreaming" ? looks.dream_id === entry : swept, `it looks like a dream until swept: ${JSON.stringify(looks)}`);
  const closed = await until("the entry to be closed", async () => {
    const r = (await pool.query("select status, error from dream_journal where id = $1", [entry])).rows[0];
    return r.status === "dreaming" ? undefined : r;
  });
  t.match(closed, { status: "failed", error: /worker stopped/ });
  t.equal((await pool.query("select state::text from pgboss.job where id = $1", [jobId])).rows[0].state, "cancelled");
  t.not(((await (await fetch(`${psyche.url}/dream/status`)).json()) as any).state, "dreaming");
});

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// The dream settings (validated, stored in the database) and do-not-disturb (requests wait),
// on the real stack and the tiny model.
import t from "tap";
import OpenAI from "openai";
import { until } from "../helpers/until.js";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const pool = psyche.db.pool;
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${psyche.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const stored = async () => (await pool.query("select overrides from dream_settings")).rows[0].overrides;
const journal = async (jobId: string) => (await pool.query("select * from dream_journal where job_id = $1", [jobId])).rows[0];

t.test("GET /dream/config: the defaults from the flags, nothing overridden", async (t) => {
  const res = await call("GET", "/dream/config");
  t.equal(res.status, 200);
  // The test helper starts with --dream-delay-seconds 0: nothing self-started.
  t.match(res.body, {
    object: "dream.config",
    enabled: false,
    dream_delay_seconds: 300,
    dream_max_tokens: 512,
    dnd_max_seconds: 300,
    overridden: [],
  });
});

t.test("PATCH /dream/config: stored in the database, shown, and null puts a default back", async (t) => {
  const res = await call("PATCH", "/dream/config", { dream_delay_seconds: 600, dream_temperature: 0.8, idle_thoughts: false });
  t.equal(res.status, 200);
  t.match(res.body, {
    dream_delay_seconds: 600,
    dream_temperature: 0.8,
    idle_thoughts: false,
    overridden: ["dream_delay_seconds", "dream_temperature", "idle_thoughts"],
  });
  t.same(await stored(), { dream_delay_seconds: 600, dream_temperature: 0.8, idle_thoughts: false }, "the row holds exactly the changes");
  t.match((await call("GET", "/dream/config")).body, { dream_delay_seconds: 600 }, "GET reads it back");
  const view = await pool.query("select setting, value from dream_settings_changed");
  t.same(
    view.rows,
    [
      { setting: "dream_delay_seconds", value: 600 },
      { setting: "dream_temperature", value: 0.8 },
      { setting: "idle_thoughts", value: false },
    ],
    "psql sees one row per changed setting",
  );
  const reset = await call("PATCH", "/dream/config", { dream_temperature: null });
  t.match(reset.body, { dream_temperature: 1.2, overridden: ["dream_delay_seconds", "idle_thoughts"] });
  t.same(await stored(), { dream_delay_seconds: 600, idle_thoughts: false });
});

t.test("PATCH /dream/config: bad settings are refused whole, in OpenAI's error shape, and change nothing", async (t) => {
  const before = await stored();
  const bad: [unknown, string][] = [
    [{ dream_delay_seconds: 0 }, "dream_delay_seconds"],
    [{ dream_temperature: 5 }, "dream_temperature"],
    [{ dream_max_tokens: 1.5 }, "dream_max_tokens"],
    [{ enabled: "yes" }, "enabled"],
    [{ dream_cooldown_seconds: 60, dream_delay_seconds: -1 }, "dream_delay_seconds"],
    [{ dreams: true }, ""],
    [{}, ""],
  ];
  for (const [body, param] of bad) {
    const res = await call("PATCH", "/dream/config", body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.body.error, { type: "invalid_request_error", message: String });
    if (param) t.equal(res.body.error.param, param, `names ${param}`);
  }
  const notJson = await call("PATCH", "/dream/config", "{not json");
  t.equal(notJson.status, 400);
  t.match(notJson.body.error, { type: "invalid_request_error" });
  t.same(await stored(), before, "the stored settings are untouched");
});

t.test("a stored setting that no longer validates is skipped, not fatal", async (t) => {
  await pool.query(`update dream_settings set overrides = overrides || '{"dream_max_tokens": "lots", "retired_setting": 1}'::jsonb`);
  const res = await call("GET", "/dream/config");
  t.equal(res.status, 200);
  t.match(res.body, { dream_max_tokens: 512, dream_delay_seconds: 600 });
  await pool.query(`update dream_settings set overrides = overrides - 'dream_max_tokens' - 'retired_setting'`);
});

// The random tiny model now and then ends a reply itself (2 in 25 dreams of 3,000 tokens, at
// 785 and 1,327 tokens). A dream that ends itself before the chat arrives tests nothing, so a
// trial is run again (at most 4 times); any trial that does test something must pass.
const TRIALS = 4;
const dreaming = async (jobId: string) => (await journal(jobId)).status === "dreaming";

t.test("do-not-disturb: a dream starts, a chat waits for it to finish instead of waking it", async (t) => {
  await call("PATCH", "/dream/config", { dream_max_tokens: 2500 });
  const tooLong = await call("POST", "/dream/dnd", { duration_seconds: 301 });
  t.equal(tooLong.status, 400, "longer than dnd_max_seconds");
  t.equal(tooLong.body.error.param, "duration_seconds");
  t.equal((await call("POST", "/dream/dnd", { duration_seconds: 0 })).status, 400);
  t.equal((await pool.query("select dnd_until from dream_settings")).rows[0].dnd_until, null, "refused: no do-not-disturb");

  for (let trial = 1; trial <= TRIALS; trial++) {
    const dnd = await call("POST", "/dream/dnd", { duration_seconds: 60, reason: "memory consolidation" });
    t.equal(dnd.status, 200);
    t.match(dnd.body, { object: "dream.dnd", reason: "memory consolidation", queue_position: 0, dream_job_id: String });
    const jobId = dnd.body.dream_job_id;
    await until("the dream to start", async () => ((await journal(jobId))?.status === "dreaming" ? true : undefined));
    t.match((await call("GET", "/dream/status")).body, {
      state: "dreaming",
      kind: "dream",
      focus: "memory consolidation",
      can_interrupt: false,
      dnd_reason: "memory consolidation",
    });
    const chat = client.chat.completions.create({
      model: "psyche",
      messages: [{ role: "user", content: "are you there?" }],
      max_tokens: 4,
    });
    await until("the chat to be queued", async () =>
      (await pool.query("select 1 from turns where status = 'queued'")).rows[0] ? true : undefined,
    );
    const valid = await dreaming(jobId);
    t.equal((await chat).choices[0]!.finish_reason, "length", "the chat completed after waiting");
    await call("DELETE", "/dream/dnd");
    if (!valid && trial < TRIALS) continue;
    t.ok(valid, "the chat arrived while the dream ran");
    const row = await journal(jobId);
    t.match(row, { status: "done", was_interrupted: false }, "the dream ran to its end, undisturbed");
    t.ok(row.tokens > 0);
    const turn = (await pool.query("select started_at from turns order by created_at desc limit 1")).rows[0];
    t.ok(turn.started_at.getTime() >= row.ended_at.getTime(), "the chat started only after the dream ended");
    break;
  }
});

t.test("do-not-disturb ends at its time: a waiting chat wakes the dream then", async (t) => {
  await call("PATCH", "/dream/config", { dream_max_tokens: 8192 });
  for (let trial = 1; trial <= TRIALS; trial++) {
    const dnd = await call("POST", "/dream/dnd", { duration_seconds: 2 });
    const jobId = dnd.body.dream_job_id;
    t.ok(jobId, "a dream was queued");
    await until("the dream to start", async () => ((await journal(jobId))?.status === "dreaming" ? true : undefined));
    const sentAt = Date.now();
    const chat = await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "wake up" }], max_tokens: 4 });
    t.equal(chat.choices[0]!.finish_reason, "length");
    const row = await journal(jobId);
    const until_ = new Date(dnd.body.dnd_until).getTime();
    // Ended by itself before do-not-disturb did: nothing was tested.
    if (row.status === "done" && row.ended_at.getTime() < until_ && trial < TRIALS) continue;
    t.equal(row.status, "paused", "woken when do-not-disturb ended");
    t.ok(row.ended_at.getTime() >= until_ - 50, "not before do-not-disturb ended");
    // The wake latency runs from the chat's arrival, so it holds the wait for do-not-disturb too.
    t.ok(
      row.wake_latency_ms >= until_ - sentAt - 250,
      `wake latency ${row.wake_latency_ms} ms counts from the chat's arrival (${until_ - sentAt} ms before do-not-disturb ended)`,
    );
    t.ok(row.tokens < 8192);
    break;
  }
});

t.test("DELETE /dream/dnd: a waiting chat wakes the dream at once", async (t) => {
  for (let trial = 1; trial <= TRIALS; trial++) {
    const dnd = await call("POST", "/dream/dnd", { duration_seconds: 120 });
    const jobId = dnd.body.dream_job_id;
    await until("the dream to start", async () => ((await journal(jobId))?.status === "dreaming" ? true : undefined));
    const chat = client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
    await until("the chat to be queued", async () =>
      (await pool.query("select 1 from turns where status = 'queued'")).rows[0] ? true : undefined,
    );
    const valid = await dreaming(jobId);
    const ended = await call("DELETE", "/dream/dnd");
    t.equal((await chat).choices[0]!.finish_reason, "length");
    if (!valid && trial < TRIALS) continue;
    t.ok(valid, "the chat waits");
    t.match(ended.body, { dnd_until: null, queue_position: 1 });
    const row = await journal(jobId);
    t.equal(row.status, "paused");
    t.ok(row.wake_latency_ms < 1000, `woke ${row.wake_latency_ms} ms after do-not-disturb ended`);
    t.match((await call("GET", "/dream/status")).body, { can_interrupt: true, dnd_until: null });
    break;
  }
});

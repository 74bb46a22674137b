// Dreaming by itself: after a quiet spell, one dream at a time that a chat pauses and a quiet spell
// resumes, a cooldown, a time budget and the wake lock (dream-schedule-queue.test.ts: idle thoughts, and a chat always wins). The real stack.
import t from "tap";
import OpenAI from "openai";
import { until } from "../helpers/until.js";
import { startPsyche } from "../helpers/psyche.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test("quiet, it dreams; a chat wakes it; quiet again, it goes on in the same entry", async (t) => {
  const psyche = await startPsyche(t, {
    recallPromptTokens: 0,
    dreamDelaySeconds: 1,
    wakeLockSeconds: 1,
    // No cooldown: a dream the model ended by itself before the chat came is followed by another.
    dreamCooldownSeconds: 0,
    dreamMaxTokens: 3000,
    // The dream's whole time, across its stretches: it ends as done after it resumes (by its
    // tokens, or this). At 4 s a loaded machine's first stretch (1,885 tokens before the chat
    // paused it, in a fresh clone's test run) spent it all, and the resumed one wrote nothing.
    dreamMaxSeconds: 10,
  });
  const pool = psyche.db.pool;
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const tried: string[] = [];
  let dreaming: { id: string; job_id: string } | undefined;
  let paused: { status: string; content: string; tokens: number; wake_latency_ms: number } | undefined;
  // The tiny model may sample its end of turn (src/inference/random-model.ts), and a loaded
  // machine may spend the time budget before the chat: such a dream ends as done before the
  // chat wakes it, and the next one is tried. A chat that does not pause a dream fails either way.
  for (let tries = 0; tries < 4 && paused?.status !== "paused"; tries++) {
    dreaming = await until(
      "a dream to start by itself",
      async () =>
        (
          await pool.query("select id, job_id from dream_journal where status = 'dreaming' and resumes = 0 and id <> all($1::uuid[])", [
            tried,
          ])
        ).rows[0],
    );
    tried.push(dreaming!.id);
    const job = await pool.query("select priority, data from pgboss.job where id = $1", [dreaming!.job_id]);
    t.match(job.rows[0], { priority: 20, data: { kind: "dream", maxTokens: 3000 } });
    // Let it write something before the chat comes.
    await until(
      "the dream's first checkpoint",
      async () => (await pool.query("select 1 from dream_journal where id = $1 and tokens > 0", [dreaming!.id])).rows[0],
    );
    const chat = await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
    t.equal(chat.choices[0]!.finish_reason, "length");
    paused = await until("the dream to pause", async () => {
      const r = (await pool.query("select status, content, tokens, wake_latency_ms from dream_journal where id = $1", [dreaming!.id]))
        .rows[0];
      return r.status === "dreaming" ? undefined : r;
    });
    if (paused!.status === "done") t.comment(`the dream ended by itself after ${paused!.tokens} tokens, before the chat: the next one`);
  }
  t.equal(paused!.status, "paused", "woken, it is kept to be continued");
  t.ok(paused!.tokens > 0, `with what it had: ${paused!.tokens} tokens`);
  t.type(paused!.wake_latency_ms, "number");
  const ended = await until(
    "the dream to go on and end",
    async () => (await pool.query("select * from dream_journal where id = $1 and status = 'done'", [dreaming!.id])).rows[0],
    30_000,
  );
  t.equal(ended.resumes, 1, "resumed once");
  t.ok(ended.content.startsWith(paused!.content), "its text goes on from where it stopped");
  t.ok(ended.tokens > paused!.tokens, `and grew: ${paused!.tokens} to ${ended.tokens} tokens`);
  t.equal((await pool.query("select count(*)::int as n from dream_slices where journal_id = $1", [dreaming!.id])).rows[0].n, 2);
});

t.test("the cooldown: after a dream ends, no other within it", async (t) => {
  const psyche = await startPsyche(t, {
    recallPromptTokens: 0,
    dreamDelaySeconds: 1,
    wakeLockSeconds: 1,
    dreamCooldownSeconds: 3600,
    dreamMaxTokens: 16,
  });
  const pool = psyche.db.pool;
  await until(
    "a dream to start and end",
    async () => (await pool.query("select ended_at from dream_journal where status = 'done'")).rows[0],
  );
  await sleep(2500);
  t.equal(
    (await pool.query("select count(*)::int as n from dream_journal")).rows[0].n,
    1,
    "one entry, and no second dream within the cooldown",
  );
});

t.test("no dream within the delay after a request; one after it; the time budget ends a dream as done", async (t) => {
  const psyche = await startPsyche(t, {
    recallPromptTokens: 0,
    dreamDelaySeconds: 2,
    wakeLockSeconds: 1,
    dreamCooldownSeconds: 0,
    // The budget's clock starts before the dream reads its prompt (src/dreams/reverie-job.ts):
    // on a loaded CI machine one second was spent before the first token. Three leave room for
    // tokens, and 8,192 stay out of reach (the test model writes 500 to 1,000 a second here).
    contextSize: 16384,
    dreamMaxTokens: 8192,
    dreamMaxSeconds: 3,
  });
  const pool = psyche.db.pool;
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  // Keep it awake past start-up, then go quiet.
  await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
  const quietFrom = Date.now();
  await sleep(1000);
  t.equal((await pool.query("select count(*)::int as n from dream_journal")).rows[0].n, 0, "nothing within the delay");
  const first = await until(
    "a dream after the delay",
    async () => (await pool.query("select id, started_at from dream_journal order by started_at limit 1")).rows[0],
  );
  t.ok(first.started_at.getTime() - quietFrom >= 1900, "it waited for the delay");
  // The tiny model may sample its end of turn (src/inference/random-model.ts): such a dream
  // ends as done well inside the budget. The next one (no cooldown) then shows the budget; one
  // that ran past it fails either way.
  let ended: { id: string; status: string; was_interrupted: boolean; tokens: number; took: number } | undefined;
  let id: string = first.id;
  for (let tries = 0; tries < 3; tries++) {
    const r = await until("the time budget", async () => {
      const row = (
        await pool.query(
          `select id, status, was_interrupted, tokens, extract(epoch from ended_at - started_at)::float8 as took
             from dream_journal
            where case when $2 then started_at > (select started_at from dream_journal where id = $1) else id = $1 end
            order by started_at limit 1`,
          [id, tries > 0],
        )
      ).rows[0];
      return row && row.status !== "dreaming" ? row : undefined;
    });
    t.match(r, { status: "done", was_interrupted: false });
    t.ok(r.took <= 3.5, `within the budget: ${r.took} s`);
    ended = r;
    if (r.took >= 1) break;
    t.comment(`the model ended a dream by itself after ${r.tokens} tokens in ${r.took} s: the next one`);
    id = r.id;
  }
  t.ok(ended && ended.tokens > 0 && ended.tokens < 8192, `stopped by time after ${ended?.tokens} tokens`);
  t.ok(ended && ended.took >= 1 && ended.took <= 3.5, `it ran until the budget: ${ended?.took} s`);
});

t.test("the wake lock: no dream within it of a request, even past the dream delay", async (t) => {
  const psyche = await startPsyche(t, {
    recallPromptTokens: 0,
    dreamDelaySeconds: 1,
    wakeLockSeconds: 3,
    dreamCooldownSeconds: 0,
    dreamMaxTokens: 16,
  });
  const pool = psyche.db.pool;
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
  const finished = (await pool.query("select finished_at from turns order by created_at desc limit 1")).rows[0].finished_at as Date;
  await sleep(2000);
  t.equal(
    (await pool.query("select count(*)::int as n from dream_journal where started_at > $1", [finished])).rows[0].n,
    0,
    "past the delay, inside the lock: no dream",
  );
  const dream = await until(
    "a dream after the lock",
    async () => (await pool.query("select started_at from dream_journal where started_at > $1", [finished])).rows[0],
  );
  t.ok(dream.started_at.getTime() - finished.getTime() >= 2900, "it waited out the lock");
});

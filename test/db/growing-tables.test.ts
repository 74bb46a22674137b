// The questions asked on a timer or at every turn of tables that grow with use (turns, the mood's
// history, the dream journal and its stretches) read an index, not every row
// (migrations/000032_growing_tables.sql): at 100,000 turns the dream scheduler's look read them
// all in 250 ms, in a transaction holding the embedded database's one backend. Each statement is
// explained as the code sends it, over tables of some thousands of rows and, as on the embedded
// database (no autovacuum), without the planner's statistics but those the memory worker
// gathers; the answers of the rewritten ones are checked against what they mean.
import t from "tap";
import { randomUUID } from "node:crypto";
import { dreamState, endDream, quietMoment, refreshDreamStatistics, resumeDream } from "../../src/db/sql/dreams.js";
import { anyDreaming, closeAbandonedEntries, strandedJobs } from "../../src/db/sql/pgboss-jobs.js";
import { moodFromSource } from "../../src/db/sql/mood.js";
import { INFERENCE_QUEUE } from "../../src/jobs/queue.js";
import type { Pool } from "../../src/db/pool.js";
import { testDatabase } from "../helpers/database.js";
import { explaining, scansOf } from "../helpers/plans.js";

const GROWING = ["turns", "emotion_log", "dream_journal", "dream_slices"];

/** Thousands of past turns, mood entries, journal entries and stretches, all ended an hour and more ago. */
async function grown(pool: Pool): Promise<void> {
  await pool.query("insert into conversations (id) values ('grown')");
  await pool.query(
    `insert into turns (conversation_id, status, model, max_tokens, content, created_at, finished_at)
     select 'grown', 'done', 'psyche', 16, 'an answer', now() - make_interval(secs => 3600 + g * 30), now() - make_interval(secs => 3598 + g * 30)
     from generate_series(1, 5000) g`,
  );
  await pool.query(
    `insert into emotion_log (at, valence, arousal, cause, source_id)
     select now() - make_interval(secs => 3600 + g * 30), 0.1, 0.1, 'turn', 'turn-' || g from generate_series(1, 5000) g`,
  );
  await pool.query(
    `insert into dream_journal (id, kind, status, started_at, ended_at, content, model)
     select gen_random_uuid(), (array['dream', 'idle', 'reflect'])[g % 3 + 1], 'done',
       now() - make_interval(secs => 3600 + g * 200), now() - make_interval(secs => 3570 + g * 200), 'a dream', 'psyche'
     from generate_series(1, 3000) g`,
  );
  await pool.query("insert into dream_slices (journal_id, started_at, ended_at) select id, started_at, ended_at from dream_journal");
  // No statistics, as on the embedded database, which has no autovacuum; but the stretches'
  // that the memory worker's hourly tick gathers.
  await refreshDreamStatistics(pool);
}

t.test("the timer's and each turn's questions read no growing table row by row", async (t) => {
  const { pool, boss } = await testDatabase(t);
  await grown(pool);
  // A chat's job running for a minute: the heartbeat then looks for its turn.
  await boss.send(INFERENCE_QUEUE, { kind: "chat", turnId: randomUUID() });
  await pool.query(`update pgboss.job set state = 'active', started_on = now() - interval '1 minute' where name = $1`, [INFERENCE_QUEUE]);

  const { db, plans } = explaining(pool);
  const asked: [string, () => Promise<unknown>][] = [
    ["the dream scheduler's look", () => quietMoment(db, new Date(), 45, 3600)],
    ["the dream state", () => dreamState(db, 60)],
    ["the heartbeat's stranded jobs", () => strandedJobs(db, INFERENCE_QUEUE, 10_000)],
    ["the heartbeat's look for a dream", () => anyDreaming(db)],
    ["the heartbeat's abandoned entries", () => closeAbandonedEntries(db, 10_000)],
    ["a turn's mood, moved already?", () => moodFromSource(db, "turn", "a-turn-not-seen")],
    ["a paused dream taken up", () => resumeDream(db, { kind: "dream", scope: null, jobId: null })],
    [
      "a woken dream's end",
      () => endDream(db, randomUUID(), { status: "paused", content: "", tokens: 0, significance: null, valence: null, arousal: null }, 5),
    ],
  ];
  for (const [what, ask] of asked) {
    const before = plans.length;
    await ask().catch(() => undefined);
    t.equal(plans.length, before + 1, `${what}: one statement`);
    t.same(scansOf(plans.at(-1)!, GROWING), [], `${what}: no growing table read row by row`);
  }
});

t.test("the rewritten look answers as before: the last activity, an idle thought since, the budget's stretches", async (t) => {
  const { pool } = await testDatabase(t);
  await grown(pool);
  const started = new Date(Date.now() - 86_400_000);
  let m = await quietMoment(pool, started, 45, 3600);
  t.ok(m.quiet! > 3595 && m.quiet! < 3700, `quiet since the last turn ended (${m.quiet})`);
  t.equal(m.conversation_id, "grown");
  t.equal(m.thought_since_request, false, "every idle thought came before the last turn");
  t.equal(m.budget_used, 0, "no stretch within the last hour");

  // A turn that began two minutes ago and is still running: quiet counts from its start.
  await pool.query(
    "insert into turns (conversation_id, status, model, max_tokens, created_at) values ('grown', 'running', 'psyche', 16, now() - interval '2 minutes')",
  );
  // An idle thought after it, and an open stretch of a dream begun ten minutes ago.
  await pool.query(
    "insert into dream_journal (id, kind, status, started_at, ended_at, model) values (gen_random_uuid(), 'idle', 'done', now() - interval '1 minute', now() - interval '50 seconds', 'psyche')",
  );
  const dream = randomUUID();
  await pool.query(
    "insert into dream_journal (id, kind, status, started_at, model) values ($1, 'dream', 'dreaming', now() - interval '10 minutes', 'psyche')",
    [dream],
  );
  await pool.query("insert into dream_slices (journal_id, started_at) values ($1, now() - interval '10 minutes')", [dream]);
  m = await quietMoment(pool, started, 45, 3600);
  t.ok(m.quiet! > 115 && m.quiet! < 130, `quiet since the running turn began (${m.quiet})`);
  t.equal(m.thought_since_request, true);
  t.ok(m.budget_used > 595 && m.budget_used < 610, `the open stretch counts to now (${m.budget_used})`);
  t.equal((await dreamState(pool, 60)).state, "waking", "a chat runs that began after the dream");

  // The turn finishes now: quiet counts from its end.
  await pool.query("update turns set status = 'done', finished_at = now(), content = 'done' where status = 'running'");
  m = await quietMoment(pool, started, 45, 3600);
  t.ok(m.quiet! < 5, `quiet since the turn's end (${m.quiet})`);
  t.equal(m.thought_since_request, false, "the idle thought came before that end");
  await pool.query("update dream_journal set status = 'done', ended_at = now() where id = $1", [dream]);
  const state = await dreamState(pool, 60);
  t.equal(state.state, "awake", "a turn ended within the minute");
  t.ok(Math.abs(state.since!.getTime() - Date.now()) < 5000, "awake since that end");
});

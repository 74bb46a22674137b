/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Reflection (Generative Agents) and consolidation, queued in batches through the API or
// started by themselves, on the real stack and the tiny model; the maintenance schedule.
import t from "tap";
import { until } from "../helpers/until.js";
import { startPsyche } from "../helpers/psyche.js";
import { MAINTENANCE_QUEUE } from "../../src/jobs/queue.js";
import { MAINTENANCE_CRON } from "../../workers/memory-worker.js";

// Insert-time deduplication off, so consolidation has near-duplicates to find; a mood that
// settles in seconds, so its scheduled decay shows.
const psyche = await startPsyche(t, { recallPromptTokens: 0, duplicateSimilarity: 1, moodHalfLifeMinutes: 0.01 });
const pool = psyche.db.pool;
const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${psyche.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const remember = async (content: string, importance: number, kind = "episodic") =>
  (await call("POST", "/v1/memories", { content, importance, kind })).body.id as string;
const finished = (id: string) =>
  until(
    `job ${id}`,
    async () => {
      const res = await call("GET", `/dream/jobs/${id}`);
      return res.body.status === "completed" || res.body.status === "failed" ? res.body : undefined;
    },
    60_000,
  );

t.test("a batch of reflections: each journaled, each insight citing the memories it drew on", async (t) => {
  const sources: string[] = [];
  for (const text of [
    "Anna practised the piano for two hours",
    "Anna was nervous before her recital",
    "Anna played Chopin at the recital",
    "The weather turned cold in November",
  ]) {
    sources.push(await remember(text, 0.6));
  }
  const queued = await call("POST", "/dream/jobs", { kind: "reflect", count: 3, max_tokens: 24 });
  t.equal(queued.status, 202);
  t.equal(queued.body.data.length, 3);
  t.match(queued.body.data[0], { object: "dream.job", kind: "reflect", status: "queued" });
  const jobs: any[] = [];
  for (const { id } of queued.body.data) jobs.push(await finished(id));
  // A batch's jobs are alike in the queue (one priority, queued in one statement), so the worker
  // may take them in any order: "first" and "later" are by when each started.
  jobs.sort((a, b) => Date.parse(a.journal[0].started_at) - Date.parse(b.journal[0].started_at));
  for (const job of jobs) {
    t.match(job, { kind: "reflect", status: "completed", started_at: String, completed_at: String });
    t.equal(job.journal.length, 1, "one journal entry per job");
    t.match(job.journal[0], { kind: "reflect", status: "done", was_interrupted: false });
  }
  const first = jobs[0].journal[0];
  t.same([...first.seed_memory_ids].sort(), [...sources].sort(), "the first reflection drew on the new memories");
  t.equal(first.tokens, 24);
  const insight = await until(
    "the first insight",
    async () => (await pool.query("select * from memories where kind = 'insight' and source_id = $1", [first.id])).rows[0],
  );
  t.ok(insight.citations.length > 0, "it cites");
  t.ok(
    insight.citations.every((c: string) => sources.includes(c)),
    "only memories the reflection drew on",
  );
  const viewed = await pool.query("select source_id from insights_with_sources where id = $1", [insight.id]);
  t.equal(viewed.rows.length, insight.citations.length, "insights_with_sources lists each source");
  // The next reflections draw on what came after the first: its insight, not the old memories again.
  const later = jobs[2].journal[0];
  t.notOk(
    later.seed_memory_ids.some((id: string) => sources.includes(id)),
    "a later reflection does not redo the same memories",
  );
  const listed = await call("GET", "/dream/journal?kind=reflect&limit=2");
  t.equal(listed.body.data.length, 2);
  t.equal(listed.body.has_more, true);
  const next = await call("GET", `/dream/journal?kind=reflect&limit=2&before=${encodeURIComponent(listed.body.next_before)}`);
  t.equal(next.body.data.length, 1, "the journal pages back");
  t.equal(next.body.has_more, false);
  t.ok([...listed.body.data, ...next.body.data].every((r: any) => r.kind === "reflect"));
});

t.test("a reflection draws on one scope's memories and keeps its insight in that scope", async (t) => {
  const scoped = async (content: string, scope: string) =>
    (
      await fetch(`${psyche.url}/v1/memories`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-psyche-scope": scope },
        body: JSON.stringify({ content, importance: 0.7 }),
      }).then((r) => r.json() as Promise<any>)
    ).id as string;
  const mine = [await scoped("The glaze recipe needs more feldspar", "/p/pottery"), await scoped("The kiln cracked a bowl", "/p/pottery")];
  const theirs = await scoped("The tax return is due in April", "/p/accounts");
  const queued = await call("POST", "/dream/jobs", { kind: "reflect", max_tokens: 16, scope: "/p/pottery" });
  t.equal(queued.status, 202);
  const job = await finished(queued.body.data[0].id);
  const entry = job.journal[0];
  t.match(entry, { kind: "reflect", status: "done", scope: "/p/pottery" });
  t.same([...entry.seed_memory_ids].sort(), [...mine].sort(), "the scope's own memories, none of another's");
  t.notOk(entry.seed_memory_ids.includes(theirs));
  const insight = await until(
    "the scoped insight",
    async () => (await pool.query("select scope from memories where kind = 'insight' and source_id = $1", [entry.id])).rows[0],
  );
  t.equal(insight.scope, "/p/pottery", "kept in the scope it drew on");
  const bad = await call("POST", "/dream/jobs", { kind: "consolidate", scope: "/p/pottery" });
  t.equal(bad.status, 400, "consolidation is of the whole store");
});

t.test("bad job requests: OpenAI's error shape; unknown jobs are 404", async (t) => {
  const before = (await pool.query("select count(*)::int as n from pgboss.job where name like 'psyche-%' and data->>'kind' <> 'tick'"))
    .rows[0].n;
  for (const body of [
    { kind: "nap" },
    { kind: "reflect", count: 0 },
    { kind: "consolidate", focus: "x" },
    { kind: "consolidate", max_tokens: 5 },
    { kind: "reflect", focus: "" },
  ]) {
    const res = await call("POST", "/dream/jobs", body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(res.body.error, { type: "invalid_request_error", message: String });
  }
  t.equal(
    (await pool.query("select count(*)::int as n from pgboss.job where name like 'psyche-%' and data->>'kind' <> 'tick'")).rows[0].n,
    before,
    "nothing queued",
  );
  const notUuid = await call("GET", "/dream/jobs/not-a-job");
  t.equal(notUuid.status, 400);
  const unknown = await call("GET", "/dream/jobs/00000000-0000-4000-8000-000000000000");
  t.equal(unknown.status, 404);
  t.match(unknown.body.error, { type: "not_found_error", code: "job_not_found" });
  for (const query of ["kind=nap", "status=asleep", "before=yesterday", "limit=500", "colour=blue"]) {
    t.equal((await call("GET", `/dream/journal?${query}`)).status, 400, query);
  }
});

t.test("reflection starts by itself when the new memories' importance adds up, in the scope where most happened", async (t) => {
  await call("PATCH", "/dream/config", {
    enabled: true,
    reflection_threshold: 1.5,
    wake_lock_seconds: 0,
    idle_thoughts: false,
    dream_delay_seconds: 3600,
    reflection_max_tokens: 16,
  });
  const before = (await pool.query("select count(*)::int as n from dream_journal where kind = 'reflect'")).rows[0].n;
  const inCats = async (content: string, importance: number) =>
    (
      await fetch(`${psyche.url}/v1/memories`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-psyche-scope": "/p/cats" },
        body: JSON.stringify({ content, importance }),
      }).then((r) => r.json() as Promise<any>)
    ).id as string;
  const cats = [await inCats("Bruno adopted a grey cat called Pixel", 0.5), await inCats("Pixel the cat sleeps on Bruno's keyboard", 0.5)];
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(
    (await pool.query("select count(*)::int as n from dream_journal where kind = 'reflect'")).rows[0].n,
    before,
    "not below the threshold",
  );
  cats.push(await inCats("Bruno laughs about Pixel every morning", 0.45));
  // The last straw is in another scope: the newest memory's scope is not the one to reflect on.
  await remember("The bakery on the corner opens at seven", 0.3);
  const row = await until(
    "a reflection by itself",
    async () =>
      (await pool.query("select * from dream_journal where kind = 'reflect' and status = 'done' and $1::uuid[] <@ seed_memory_ids", [cats]))
        .rows[0],
  );
  t.ok(row, "it drew on the three new memories");
  t.equal(row.scope, "/p/cats", "in the scope that holds most of what happened since the last reflection");
  const job = await pool.query("select priority, data from pgboss.job where id = $1", [row.job_id]);
  t.match(job.rows[0], { priority: 20, data: { kind: "reflect", maxTokens: 16, scope: "/p/cats" } });
  await call("PATCH", "/dream/config", { enabled: false });
});

t.test("consolidation folds memories that say the same thing into the more important one; the rest stay", async (t) => {
  const keep = await remember("We planted tomatoes and basil in the garden on Monday", 0.7, "semantic");
  // The same words, as an import behind Psyche's back would leave them: a row of its own.
  const twin = (
    await pool.query(
      `insert into memories (kind, content, importance, embedding, embedder)
       select kind, 'we planted tomatoes and basil in the garden, on Monday!', 0.4, embedding, embedder from memories where id = $1 returning id`,
      [keep],
    )
  ).rows[0].id as string;
  const near = await remember("We planted tomatoes and basil in the garden on Monday morning", 0.4, "semantic");
  const other = await remember("The train to Porto leaves at nine", 0.4, "semantic");
  await call("PATCH", "/dream/config", { consolidation_similarity: 0.8 });
  const queued = await call("POST", "/dream/jobs", { kind: "consolidate" });
  t.equal(queued.status, 202);
  const job = await finished(queued.body.data[0].id);
  t.equal(job.status, "completed");
  t.match(job.journal[0], { kind: "consolidate", status: "done", content: /^Folded \d+ near-duplicate/ });
  const entry = await pool.query("select worker_id from dream_journal where id = $1", [job.journal[0].id]);
  t.equal(entry.rows[0].worker_id, psyche.worker.id, "it names the inference worker of its process (whose heartbeat says it lives)");
  const rows = (
    await pool.query("select id, deleted_at, merged_into, reinforcements, importance from memories where id = any($1::uuid[])", [
      [keep, twin, near, other],
    ])
  ).rows;
  const by = Object.fromEntries(rows.map((r) => [r.id, r]));
  t.equal(by[twin].merged_into, keep, "the less important twin points at the survivor");
  t.ok(by[twin].deleted_at, "and is gone from searches");
  t.equal(by[keep].deleted_at, null);
  t.equal(by[keep].reinforcements, 1, "the survivor counts what it absorbed");
  t.equal(by[other].deleted_at, null, "an unrelated memory stays");
  t.equal(by[near].deleted_at, null, "and so does one that shares most words but says more");
  t.ok(job.journal[0].seed_memory_ids.includes(keep));
  // Each fold is in both histories: what the survivor absorbed, and where the other went.
  const kept = (await call("GET", `/v1/memories/${keep}/history`)).body.data;
  t.match(kept.at(-1), { change: "folded", by: "consolidation", related: [twin] });
  t.match(kept[0], { version: 1, change: "created", by: "api" });
  const gone = await call("GET", `/v1/memories/${twin}/history`);
  t.equal(gone.status, 200, "a folded memory's history stays readable until it is purged");
  t.match(gone.body.data.at(-1), { change: "folded_into", by: "consolidation", related: [keep] });
  const again = await finished((await call("POST", "/dream/jobs", { kind: "consolidate" })).body.data[0].id);
  t.equal(again.journal[0].content, "Nothing to fold.", "a second run finds nothing");
});

t.test("the maintenance schedule: pg-boss holds the cron; a tick writes the mood's decay", async (t) => {
  const schedule = await pool.query("select cron, data from pgboss.schedule where name = $1", [MAINTENANCE_QUEUE]);
  t.same(schedule.rows, [{ cron: MAINTENANCE_CRON, data: { kind: "tick" } }]);
  await psyche.mem.mood.react({ valence: -0.9, arousal: 0.9 }, "api", null);
  await new Promise((r) => setTimeout(r, 1500)); // several half-lives
  await psyche.db.boss.send(MAINTENANCE_QUEUE, { kind: "tick" });
  const decayed = await until(
    "the decay row",
    async () => (await pool.query("select valence, arousal from emotion_log where cause = 'decay' order by id desc limit 1")).rows[0],
  );
  const baseline = psyche.mem.mood.settings.baseline;
  t.ok(
    Math.abs(decayed.valence - baseline.valence) < 0.1 && Math.abs(decayed.arousal - baseline.arousal) < 0.1,
    "settled near the baseline",
  );
  // Consolidation ran in the same tick only if due: the last finished one was moments ago.
  const runs = (await pool.query("select count(*)::int as n from dream_journal where kind = 'consolidate'")).rows[0].n;
  t.equal(runs, 2, "no consolidation within the interval");
});

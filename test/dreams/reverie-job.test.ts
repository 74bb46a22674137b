// A reverie job's lifecycle, driven directly (dreams/reverie-job.ts) on the real database and
// queue, with the server's own worker stopped so that only the test takes jobs: a chat waiting
// puts the reverie back, a reverie runs to its journal entry and completes its job, a failing
// model fails it, and, handed to the scheduler (inference/scheduler.ts), a model deaf to the
// wake is abandoned after WAKE_DEADLINE_MS.
import t, { type Test } from "tap";
import { TestEngine } from "../helpers/scripted-engine.js";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { ModelScheduler, type ScheduledJob, standaloneScheduler, WAKE_DEADLINE_MS } from "../../src/inference/scheduler.js";
import { createLogger } from "../../src/log.js";
import { INFERENCE_QUEUE, Priority, type ReverieJob } from "../../src/jobs/queue.js";
import { buildReverie, queueReverie } from "../../src/dreams/queue-reverie.js";
import { runReverieJob } from "../../src/dreams/reverie-job.js";
import { Wake } from "../../src/dreams/dream.js";
import { defaultDreamSettings } from "../../src/dreams/settings.js";
import { inProcessPsyche } from "../helpers/in-process.js";

/** An engine whose reply the test sets: text, an error, or a generation that ignores its signal for `deafMs`. */
class DreamEngine extends TestEngine {
  readonly modelName = "test";
  next: { text?: string; error?: string; deafMs?: number } = { text: "a quiet dream of rivers" };
  started: (() => void) | undefined;

  override async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { text = "", error, deafMs } = this.next;
    this.started?.();
    if (error) throw new Error(error);
    request.onText?.(text, 1);
    if (deafMs) await new Promise((r) => setTimeout(r, deafMs));
    return { text, finishReason: "stop", promptTokens: 5, completionTokens: 3, toolCalls: [] };
  }
}

const engine = new DreamEngine();
const psyche = await inProcessPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine });
await psyche.worker.stop(0);
const { pool, boss, bus } = psyche.db;
const log = createLogger("silent");
const settings = defaultDreamSettings(psyche.config);
const deps = { pool, boss, bus, model: standaloneScheduler(engine), log, pollMs: 50, memory: psyche.mem.memory, mood: psyche.mem.mood };

/** Queues a reverie and takes it, as the worker's loop does. */
async function take(t: Test, job: ReverieJob): Promise<string> {
  const id = await queueReverie(deps, job);
  const [fetched] = await boss.fetch(INFERENCE_QUEUE, { batchSize: 1, priority: true });
  t.equal(fetched?.id, id, "the test took the reverie it queued");
  return id!;
}

function run(jobId: string, job: ReverieJob, controller = new AbortController()) {
  const outliving: Promise<unknown>[] = [];
  const done = runReverieJob(deps, jobId, job, controller, { outlives: (w) => outliving.push(w) });
  return { done, outliving, controller };
}

const jobState = async (id: string) =>
  (await pool.query("select state::text from pgboss.job where id = $1", [id])).rows[0]?.state as string;

t.test("a reverie runs to its journal entry and completes its job", async (t) => {
  engine.next = { text: "a quiet dream of rivers" };
  const job = buildReverie(settings, { kind: "dream", focus: "rivers" });
  const id = await take(t, job);
  const r = run(id, job);
  t.equal(await r.done, "dream-done");
  t.equal(r.outliving.length, 1, "its scoring outlives the job");
  await Promise.all(r.outliving);
  t.equal(await jobState(id), "completed");
  const entry = (await pool.query("select status, content, focus from dream_journal where job_id = $1", [id])).rows[0];
  t.match(entry, { status: "done", content: "a quiet dream of rivers", focus: "rivers" });
});

t.test("an entry says what it is about: its seeds' words while it runs, its own and theirs once ended", async (t) => {
  for (const content of [
    "The lighthouse keeper in Brittany trims the lamp wick every evening",
    "Storms over the Brittany coast kept the lighthouse lamp burning all night",
    "The user asked about the weather today",
    "The user likes tea in the morning",
  ])
    await psyche.mem.memory.remember({ kind: "episodic", content, sourceKind: "api", importance: 0.5 });
  let running: { topics: string[] } | undefined;
  engine.started = () => void psyche.request("/dream/status").then(async (r) => (running = (await r.json()) as { topics: string[] }));
  t.teardown(() => (engine.started = undefined));
  engine.next = { text: "I dreamt of a lighthouse lamp in Brittany, its wick trimmed by a keeper made of fog", deafMs: 300 };
  const job = buildReverie(settings, { kind: "dream", focus: "the lighthouse in Brittany" });
  const id = await take(t, job);
  const r = run(id, job);
  t.equal(await r.done, "dream-done");
  await Promise.all(r.outliving);
  t.ok(running?.topics.includes("lighthouse"), `/dream/status while it ran: ${running?.topics.join(", ")}`);
  const entry = (await pool.query<{ topics: string[] }>("select topics from dream_journal where job_id = $1", [id])).rows[0]!;
  t.ok(entry.topics.length > 0 && entry.topics.length <= 5, `a few: ${entry.topics.join(", ")}`);
  t.ok(entry.topics.includes("lighthouse") && entry.topics.includes("brittany"), "its own words");
  t.notOk(entry.topics.includes("user"), "not a word every memory has");
  const journalId = (await pool.query("select id::text from dream_journal where job_id = $1", [id])).rows[0].id as string;
  const finished = await pool.query("select data from events where type = 'reverie.finished' and data->>'journal_id' = $1", [journalId]);
  t.same(finished.rows[0]?.data.topics, entry.topics, "and its reverie.finished event says so");
});

t.test("a chat waiting puts the reverie back before it starts", async (t) => {
  const job = buildReverie(settings, { kind: "reflect" });
  const id = await take(t, job);
  const chat = await boss.send(
    INFERENCE_QUEUE,
    { kind: "chat", turnId: "00000000-0000-4000-8000-000000000001" },
    { priority: Priority.chat },
  );
  const r = run(id, job);
  t.equal(await r.done, "put-back");
  t.equal(await jobState(id), "created", "queued again, for after the chat");
  t.equal((await pool.query("select count(*)::int as n from dream_journal where job_id = $1", [id])).rows[0].n, 0, "nothing was written");
  await boss.cancel(INFERENCE_QUEUE, [chat!, id]);
});

t.test("a model that fails fails the job, and the journal says why", async (t) => {
  engine.next = { error: "the model fell over" };
  const job = buildReverie(settings, { kind: "dream" });
  const id = await take(t, job);
  t.equal(await run(id, job).done, "failed");
  t.equal(await jobState(id), "failed");
  const entry = (await pool.query("select status, error from dream_journal where job_id = $1", [id])).rows[0];
  t.match(entry, { error: /the model fell over/ }, JSON.stringify(entry));
});

t.test("a reverie deaf to the wake is abandoned after the deadline; its end is written when it comes", async (t) => {
  engine.next = { text: "a dream that will not stop", deafMs: WAKE_DEADLINE_MS * 4 };
  const job = buildReverie(settings, { kind: "dream" });
  const id = await take(t, job);
  const started = new Promise<void>((resolve) => (engine.started = resolve));
  const outcomes: string[] = [];
  const outliving: Promise<unknown>[] = [];
  let woken: AbortController | undefined;
  const scheduler: ModelScheduler<ScheduledJob> = new ModelScheduler(engine, {
    runChat: async () => undefined,
    runReverie: async (_job, controller) => {
      woken = controller;
      const outcome = await runReverieJob({ ...deps, model: scheduler }, id, job, controller, { outlives: (w) => outliving.push(w) });
      outcomes.push(outcome);
      return outcome;
    },
    abandoned: (_job, run) => {
      outcomes.push("dream-abandoned");
      outliving.push(run);
    },
    returnToQueue: async () => undefined,
    look: () => undefined,
  });
  const admitted = scheduler.admit([{ id, kind: "reverie" }]);
  await started;
  const wokeAt = performance.now();
  woken!.abort(new Wake());
  await admitted;
  const waited = performance.now() - wokeAt;
  t.ok(waited >= WAKE_DEADLINE_MS - 20, `the worker waited out the deadline (${waited.toFixed(0)} ms)`);
  t.same(outcomes, ["dream-abandoned"]);
  await Promise.all(outliving);
  await Promise.all(outliving);
  t.same(outcomes, ["dream-abandoned", "dream-paused"], "and the reverie's end came later (paused, to be continued)");
  t.equal(await jobState(id), "completed");
  engine.started = undefined;
});

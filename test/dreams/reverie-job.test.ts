// A reverie job's lifecycle, driven directly (dreams/reverie-job.ts) on the real database and
// queue, with the server's own worker stopped so that only the test takes jobs: a chat waiting
// puts the reverie back, a reverie runs to its journal entry and completes its job, a failing
// model fails it, and a model deaf to the wake is abandoned after WAKE_DEADLINE_MS.
import t, { type Test } from "tap";
import type { GenerateRequest, GenerateResult, InferenceEngine } from "../../src/inference/engine.js";
import { createLogger } from "../../src/log.js";
import { INFERENCE_QUEUE, Priority, type ReverieJob } from "../../src/jobs/queue.js";
import { buildReverie, queueReverie } from "../../src/dreams/queue-reverie.js";
import { type ReverieOutcome, runReverieJob, WAKE_DEADLINE_MS } from "../../src/dreams/reverie-job.js";
import { Wake } from "../../src/dreams/dream.js";
import { defaultDreamSettings } from "../../src/dreams/settings.js";
import { startPsyche } from "../helpers/psyche.js";

/** An engine whose reply the test sets: text, an error, or a generation that ignores its signal for `deafMs`. */
class TestEngine implements InferenceEngine {
  readonly modelName = "test";
  next: { text?: string; error?: string; deafMs?: number } = { text: "a quiet dream of rivers" };
  started: (() => void) | undefined;

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { text = "", error, deafMs } = this.next;
    this.started?.();
    if (error) throw new Error(error);
    request.onText?.(text, 1);
    if (deafMs) await new Promise((r) => setTimeout(r, deafMs));
    return { text, finishReason: "stop", promptTokens: 5, completionTokens: 3, toolCalls: [] };
  }

  countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  async dispose(): Promise<void> {}
}

const engine = new TestEngine();
const psyche = await startPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine });
await psyche.worker.stop(0);
const { pool, boss, bus } = psyche.db;
const log = createLogger("silent");
const settings = defaultDreamSettings(psyche.config);
const deps = { pool, boss, bus, engine, log, pollMs: 50, memory: psyche.mem.memory, mood: psyche.mem.mood };

/** Queues a reverie and takes it, as the worker's loop does. */
async function take(t: Test, job: ReverieJob): Promise<string> {
  const id = await queueReverie(deps, job);
  const [fetched] = await boss.fetch(INFERENCE_QUEUE, { batchSize: 1, priority: true });
  t.equal(fetched?.id, id, "the test took the reverie it queued");
  return id!;
}

function run(jobId: string, job: ReverieJob, controller = new AbortController()) {
  const outcomes: ReverieOutcome[] = [];
  const outliving: Promise<unknown>[] = [];
  const done = runReverieJob(deps, jobId, job, controller, { outlives: (w) => outliving.push(w), ended: (o) => outcomes.push(o) });
  return { done, outcomes, outliving, controller };
}

const jobState = async (id: string) =>
  (await pool.query("select state::text from pgboss.job where id = $1", [id])).rows[0]?.state as string;

t.test("a reverie runs to its journal entry and completes its job", async (t) => {
  engine.next = { text: "a quiet dream of rivers" };
  const job = buildReverie(settings, { kind: "dream", focus: "rivers" });
  const id = await take(t, job);
  const r = run(id, job);
  t.equal(await r.done, "dream-done");
  t.same(r.outcomes, ["dream-done"]);
  t.equal(r.outliving.length, 1, "its scoring outlives the job");
  await Promise.all(r.outliving);
  t.equal(await jobState(id), "completed");
  const entry = (await pool.query("select status, content, focus from dream_journal where job_id = $1", [id])).rows[0];
  t.match(entry, { status: "done", content: "a quiet dream of rivers", focus: "rivers" });
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
  const r = run(id, job);
  await started;
  const wokeAt = performance.now();
  r.controller.abort(new Wake());
  t.equal(await r.done, "dream-abandoned");
  const waited = performance.now() - wokeAt;
  t.ok(waited >= WAKE_DEADLINE_MS - 20, `the worker waited out the deadline (${waited.toFixed(0)} ms)`);
  t.same(r.outcomes, ["dream-abandoned"]);
  await Promise.all(r.outliving);
  t.same(r.outcomes, ["dream-abandoned", "dream-interrupted"], "and the reverie's end came later");
  t.equal(await jobState(id), "completed");
  engine.started = undefined;
});

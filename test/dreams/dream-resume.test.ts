// Dreams that resume (dreams/dream.ts), driven directly on the real database and queue with the
// server's own worker stopped: a woken dream pauses and the next dream continues it in the same
// entry; a job with a focus starts its own; a paused dream whose memories were deleted, or that
// began on another model, ends with a note; the budget's share pauses a dream and ends an idle
// thought; an entry's time limit counts all of its stretches.
import t, { type Test } from "tap";
import { TestEngine } from "../helpers/scripted-engine.js";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { standaloneScheduler } from "../../src/inference/scheduler.js";
import { createLogger } from "../../src/log.js";
import { INFERENCE_QUEUE, type ReverieJob } from "../../src/jobs/queue.js";
import { buildReverie, queueReverie } from "../../src/dreams/queue-reverie.js";
import { runReverieJob } from "../../src/dreams/reverie-job.js";
import { Wake } from "../../src/dreams/dream.js";
import { defaultDreamSettings } from "../../src/dreams/settings.js";
import { inProcessPsyche } from "../helpers/in-process.js";

/** Writes its pieces one by one, a few ms apart, until they run out or its signal aborts. */
class PiecesEngine extends TestEngine {
  modelName = "test";
  pieces: string[] = [];
  requests: GenerateRequest[] = [];
  /** How long each generate took, in ms: the engine's own time, without the queue and database around it. */
  took: number[] = [];
  /** Called once the first piece is out. */
  onFirst: (() => void) | undefined;

  override async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.requests.push(request);
    const began = performance.now();
    let text = "";
    let n = 0;
    for (const piece of this.pieces) {
      if (request.signal?.aborted) break;
      text += piece;
      n++;
      request.onText?.(piece, 1);
      if (n === 1) this.onFirst?.();
      await new Promise((r) => setTimeout(r, 20));
    }
    this.took.push(performance.now() - began);
    return { text, finishReason: request.signal?.aborted ? "cancelled" : "stop", promptTokens: 5, completionTokens: n, toolCalls: [] };
  }
}

const engine = new PiecesEngine();
const psyche = await inProcessPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine });
await psyche.worker.stop(0);
const { pool, boss, bus } = psyche.db;
const settings = defaultDreamSettings(psyche.config);
const deps = { pool, boss, bus, model: standaloneScheduler(engine), log: createLogger("silent"), pollMs: 50, memory: psyche.mem.memory };

async function run(t: Test, job: ReverieJob, wakeAfterFirst = false) {
  const id = (await queueReverie(deps, job))!;
  const [fetched] = await boss.fetch(INFERENCE_QUEUE, { batchSize: 1, priority: true });
  t.equal(fetched?.id, id, "the test took the reverie it queued");
  const controller = new AbortController();
  engine.onFirst = wakeAfterFirst ? () => controller.abort(new Wake()) : undefined;
  const outliving: Promise<unknown>[] = [];
  const outcome = await runReverieJob(deps, id, job, controller, { outlives: (w) => outliving.push(w) });
  await Promise.all(outliving);
  return { id, outcome };
}

const entries = async () =>
  (
    await pool.query(
      `select j.id, j.status, j.content, j.tokens, j.resumes, j.note, j.was_interrupted, j.job_id, j.significance,
              (select count(*)::int from dream_slices s where s.journal_id = j.id) as slices
         from dream_journal j order by started_at`,
    )
  ).rows;

t.beforeEach(async () => {
  await pool.query("delete from dream_journal");
  engine.pieces = [];
  engine.requests = [];
  engine.took = [];
  engine.modelName = "test";
});

const remember = (content: string) => psyche.mem.memory.remember({ kind: "episodic", content, sourceKind: "api", importance: 0.6 });

t.test("a woken dream pauses; the next dream continues it in the same entry, to one whole text", async (t) => {
  await remember("The bees on the rooftop in Lyon swarmed in May");
  engine.pieces = ["I dreamt ", "of bees ", "over Lyon"];
  const first = await run(t, buildReverie(settings, { kind: "dream" }), true);
  t.equal(first.outcome, "dream-paused");
  const [paused] = await entries();
  t.match(paused, { status: "paused", content: "I dreamt ", tokens: 1, resumes: 0, was_interrupted: true, significance: null });
  engine.pieces = [" and", " the hives hummed"];
  const second = await run(t, buildReverie(settings, { kind: "dream" }));
  t.equal(second.outcome, "dream-done");
  t.equal(engine.requests[1]!.partialResponse, "I dreamt ", "it continued from where it stopped");
  t.same(engine.requests[1]!.messages, engine.requests[0]!.messages, "from the same prompt: its seeds");
  const all = await entries();
  t.equal(all.length, 1, "one entry");
  t.match(all[0], {
    status: "done",
    content: "I dreamt  and the hives hummed",
    tokens: 3,
    resumes: 1,
    slices: 2,
    was_interrupted: true,
    job_id: second.id,
  });
  t.type(all[0].significance, "number", "scored once it ended");
  const events = await pool.query(
    "select data from events where type = 'dream.state' and data->>'journal_id' = $1 and data->>'state' = 'dreaming' order by id",
    [all[0].id],
  );
  t.same(
    events.rows.map((r) => r.data.resumes ?? 0),
    [0, 1],
    "the events say it began, then resumed",
  );
});

t.test("a dream asked for with a focus is its own; the paused one waits", async (t) => {
  await remember("A lighthouse keeper on the Breton coast");
  engine.pieces = ["a first dream"];
  await run(t, buildReverie(settings, { kind: "dream" }), true);
  engine.pieces = ["of the lighthouse"];
  t.equal((await run(t, buildReverie(settings, { kind: "dream", focus: "the lighthouse" }))).outcome, "dream-done");
  t.same(
    (await entries()).map((e) => e.status),
    ["paused", "done"],
  );
});

t.test("a paused dream that cannot go on ends with a note, and a new one starts", async (t) => {
  const seed = await remember("A red kite over the Chilterns");
  engine.pieces = ["kites"];
  await run(t, buildReverie(settings, { kind: "dream" }), true);
  const [paused] = await entries();
  const seeds = (await pool.query("select seed_memory_ids from dream_journal where id = $1", [paused.id])).rows[0].seed_memory_ids;
  t.ok(seeds.includes(seed.memory.id), "it began from that memory");
  await psyche.mem.memory.forget(seed.memory.id, false);
  engine.pieces = ["a new dream"];
  t.equal((await run(t, buildReverie(settings, { kind: "dream" }))).outcome, "dream-done");
  const [closed, fresh] = await entries();
  t.match(closed, { id: paused.id, status: "interrupted", content: "kites", note: /1 of the memories it began from were deleted/ });
  t.equal(closed.significance, 0, "never a memory");
  t.match(fresh, { status: "done", content: "a new dream", resumes: 0 });

  await remember("Swifts nesting under the eaves");
  engine.pieces = ["swifts"];
  await run(t, buildReverie(settings, { kind: "dream" }), true);
  engine.modelName = "another-model";
  engine.pieces = ["elsewhere"];
  t.equal((await run(t, buildReverie(settings, { kind: "dream" }))).outcome, "dream-done");
  const last = (await entries()).slice(2);
  t.match(last[0], { status: "interrupted", note: /began on test, and the model is now another-model/ });
  t.match(last[1], { status: "done", content: "elsewhere" });
});

t.test("the budget's share pauses a dream and ends an idle thought; the time limit counts every stretch", async (t) => {
  engine.pieces = Array.from({ length: 200 }, (_, i) => `${i} `);
  const dream = buildReverie(settings, { kind: "dream" });
  t.equal((await run(t, { ...dream, sliceSeconds: 1 })).outcome, "dream-paused", "its share spent: paused");
  const [paused] = await entries();
  t.ok(paused.tokens > 5 && paused.tokens < 200, `it had written ${paused.tokens} pieces`);
  t.equal(paused.was_interrupted, true);
  const idle = buildReverie(settings, { kind: "idle", conversationId: null });
  t.equal((await run(t, { ...idle, sliceSeconds: 1 })).outcome, "idle-interrupted", "an idle thought's moment has passed");
  // The dream has had a second of its 2; the next stretch ends at the limit, as done. Its
  // generation is timed alone: the queue and database work around it is slow on a loaded machine.
  t.equal((await run(t, { ...dream, maxSeconds: 2 })).outcome, "dream-done");
  const took = engine.took.at(-1)!;
  t.ok(took < 1600, `it stopped at what was left of the limit (${took.toFixed(0)} ms of generating)`);
  const resumed = (await entries()).find((e) => e.id === paused.id);
  t.match(resumed, { status: "done", resumes: 1, slices: 2 });
  t.ok(resumed.tokens > paused.tokens, "and went on writing");
});

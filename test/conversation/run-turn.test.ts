// A turn from its claim to its end (src/conversation/run-turn.ts), driven directly on an
// in-process database with a scripted engine behind the scheduler: what it writes when it
// finishes, fails, is handed off or is cancelled, and the recalled memories giving way when
// they do not fit.
import t from "tap";
import { randomUUID } from "node:crypto";
import { openTurn } from "../../src/conversation/open-turn.js";
import { HandOff, runTurn } from "../../src/conversation/run-turn.js";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { standaloneScheduler } from "../../src/inference/scheduler.js";
import { createLogger } from "../../src/log.js";
import { ContextOverflow } from "../../src/errors.js";
import { MEMORY_QUEUE } from "../../src/jobs/queue.js";
import { testDatabase, turnDeps, userTurn } from "../helpers/database.js";
import { TestEngine } from "../helpers/scripted-engine.js";

/** An engine that does what the test says next: answer, fail, wait for its signal, or refuse a prompt with memories in it. */
class NextEngine extends TestEngine {
  readonly modelName = "next";
  next: "answer" | "fail" | "wait" | "overflow-with-memories" = "answer";
  readonly prompts: GenerateRequest["messages"][] = [];

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.prompts.push(request.messages);
    const done = (text: string): GenerateResult => ({ text, finishReason: "stop", promptTokens: 7, completionTokens: 2, toolCalls: [] });
    switch (this.next) {
      case "fail":
        throw new Error("the model fell over");
      case "wait":
        request.onText?.("partly", 1);
        await new Promise((resolve) => request.signal?.addEventListener("abort", resolve, { once: true }));
        return { ...done("partly"), finishReason: "cancelled" };
      case "overflow-with-memories":
        if (request.messages.some((m) => m.content.includes("remembered:"))) throw new ContextOverflow(5000, 4096);
        break;
      case "answer":
        break;
    }
    request.onText?.("hello back", 2);
    return done("hello back");
  }
}

const db = await testDatabase(t);
const engine = new NextEngine();
const workerId = randomUUID();
const deps = {
  ...db,
  model: standaloneScheduler(engine),
  log: createLogger("silent"),
  workerId,
  persona: "You are Psyche.",
  recall: { contextFor: async () => "remembered: the bees" },
};
/** A queued turn and its job, taken from the queue as the worker takes it. */
async function queued(content: string) {
  const turn = await openTurn(turnDeps(db), userTurn(content));
  turn.follower.close();
  const jobId = (await db.pool.query("select job_id from turns where id = $1", [turn.turnId])).rows[0].job_id as string;
  await db.pool.query("update pgboss.job set state = 'active', started_on = now() where id = $1", [jobId]);
  return { turnId: turn.turnId, jobId };
}
const row = async (turnId: string) =>
  (
    await db.pool.query(
      `select t.status, t.content, t.error, t.worker_id, (select state::text from pgboss.job j where j.id = t.job_id) as job,
              (select count(*)::int from pgboss.job j where j.name = $2 and j.data->>'turnId' = t.id::text) as memory_jobs,
              (select string_agg(kind, ',' order by seq) from turn_events e where e.turn_id = t.id) as events
       from turns t where t.id = $1`,
      [turnId, MEMORY_QUEUE],
    )
  ).rows[0];

t.test("a turn that finishes: its reply, its closing event, its memory job, its job completed", async (t) => {
  engine.next = "answer";
  const { turnId, jobId } = await queued("hello");
  t.equal(await runTurn(deps, turnId, jobId, new AbortController().signal), "done");
  t.match(await row(turnId), { status: "done", content: "hello back", job: "completed", memory_jobs: 1, events: /delta.*done$/ });
  const prompt = engine.prompts.at(-1)!;
  t.same(
    prompt.map((m) => [m.role, m.content]),
    [
      ["system", "You are Psyche."],
      ["system", "remembered: the bees"],
      ["user", "hello"],
    ],
    "the persona, the recalled memories just before the latest message, the transcript",
  );
  t.equal(await runTurn(deps, turnId, jobId, new AbortController().signal), "skipped", "a turn is claimed once");
});

t.test("a turn whose model fails ends failed, with an error event", async (t) => {
  engine.next = "fail";
  const { turnId, jobId } = await queued("fail please");
  t.equal(await runTurn(deps, turnId, jobId, new AbortController().signal), "failed");
  t.match(await row(turnId), { status: "failed", error: /the model fell over/, events: "error", memory_jobs: 0 });
});

t.test("handed off, a turn stays running with what it streamed; cancelled, it ends cancelled", async (t) => {
  engine.next = "wait";
  /** A turn stopped with `reason` once it has streamed a while. */
  const stoppedWith = async (text: string, reason: Error) => {
    const turn = await queued(text);
    const stop = new AbortController();
    const run = runTurn(deps, turn.turnId, turn.jobId, stop.signal);
    await new Promise((r) => setTimeout(r, 200));
    stop.abort(reason);
    return { turnId: turn.turnId, outcome: await run };
  };
  const handed = await stoppedWith("a long one", new HandOff("worker shutting down"));
  t.equal(handed.outcome, "handed-off");
  t.match(await row(handed.turnId), { status: "running", worker_id: workerId, events: "delta", job: "active" }, "for the next worker");

  const cancelled = await stoppedWith("another long one", new Error("cancelled by the client"));
  t.equal(cancelled.outcome, "cancelled");
  t.match(await row(cancelled.turnId), { status: "cancelled", content: "partly", memory_jobs: 0, job: "completed" });
});

t.test("recalled memories that do not fit give way; the turn is answered without them", async (t) => {
  engine.next = "overflow-with-memories";
  const before = engine.prompts.length;
  const { turnId, jobId } = await queued("about the bees");
  t.equal(await runTurn(deps, turnId, jobId, new AbortController().signal), "done");
  const tried = engine.prompts.slice(before);
  t.equal(tried.length, 2, "tried with them, then without");
  t.notOk(
    tried[1]!.some((m) => m.content.includes("remembered:")),
    "the second prompt holds none",
  );
  t.match(await row(turnId), { status: "done", content: "hello back" });
});

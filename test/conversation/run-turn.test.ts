// A turn from its claim to its end (src/conversation/run-turn.ts), driven directly on an
// in-process database with a scripted engine behind the scheduler: what it writes when it
// finishes, fails, is handed off or is cancelled, and the recalled memories giving way when
// they do not fit.
import t from "tap";
import { randomUUID } from "node:crypto";
import { openTurn } from "../../src/conversation/open-turn.js";
import type { TurnRequest } from "../../src/conversation/turn-request.js";
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
  next: "answer" | "fail" | "wait" | "overflow-with-memories" | "overflow-with-any-memories" = "answer";
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
      case "overflow-with-any-memories":
        if (request.messages.some((m) => m.content.includes("remembered"))) throw new ContextOverflow(5000, 4096);
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

t.test("an earlier turn's memories stay where they were put; an agent loop's steps reuse them", async (t) => {
  engine.next = "answer";
  let recalls = 0;
  const counting = { ...deps, recall: { contextFor: async (query: string) => `remembered #${++recalls}: ${query}` } };
  const conversation = { kind: "named" as const, id: `placed-${randomUUID()}` };
  /** Runs a turn of the conversation with these messages; returns the prompt the model got. */
  const turn = async (messages: TurnRequest["messages"], d = counting) => {
    const opened = await openTurn(turnDeps(db), userTurn("", { conversation, messages }));
    opened.follower.close();
    const jobId = (await db.pool.query("select job_id from turns where id = $1", [opened.turnId])).rows[0].job_id as string;
    await db.pool.query("update pgboss.job set state = 'active', started_on = now() where id = $1", [jobId]);
    t.equal(await runTurn(d, opened.turnId, jobId, new AbortController().signal), "done");
    return engine.prompts.at(-1)!.map((m) => [m.role, m.content]);
  };
  const placed = async () =>
    (
      await db.pool.query(
        "select content, context from messages where conversation_id = $1 and role = 'user' and superseded_at is null order by position",
        [conversation.id],
      )
    ).rows;

  const ask = { role: "user" as const, content: "fix the build" };
  t.same(await turn([ask]), [
    ["system", "You are Psyche."],
    ["system", "remembered #1: fix the build"],
    ["user", "fix the build"],
  ]);
  t.same(await placed(), [{ content: "fix the build", context: "remembered #1: fix the build" }], "kept on the message it was put before");

  // The agent runs a tool and sends its result: the same user message is answered, with the same memories, recalled once.
  const call = { role: "assistant" as const, content: "", toolCalls: [{ id: "call_1", name: "read", arguments: "{}" }] };
  const result = { role: "tool" as const, content: "the log says: missing semicolon", toolCallId: "call_1" };
  const step = await turn([ask, call, result]);
  t.same(step.slice(0, 3), [
    ["system", "You are Psyche."],
    ["system", "remembered #1: fix the build"],
    ["user", "fix the build"],
  ]);
  t.equal(recalls, 1, "no recall for a step of the loop");

  // The human speaks again: the first memories stay in place, the new ones go before the new message.
  const next = await turn([
    ask,
    call,
    result,
    { role: "assistant", content: "hello back" },
    { role: "user", content: "thanks, now test it" },
  ]);
  t.same(next.slice(0, step.length + 1), [...step, ["assistant", "hello back"]], "the loop's prompt is the new prompt's beginning");
  t.same(next.slice(step.length + 1), [
    ["system", "remembered #2: thanks, now test it"],
    ["user", "thanks, now test it"],
  ]);
  t.same(
    (await placed()).map((r) => r.context),
    ["remembered #1: fix the build", "remembered #2: thanks, now test it"],
  );

  // This turn's memories that do not fit give way first: the kept ones stay, the prefix the model holds.
  engine.next = "overflow-with-memories";
  const fresh = { ...counting, recall: { contextFor: async (query: string) => `remembered: ${query}` } };
  let before = engine.prompts.length;
  const sent: TurnRequest["messages"] = [
    ask,
    call,
    result,
    { role: "assistant", content: "hello back" },
    { role: "user", content: "thanks, now test it" },
    { role: "assistant", content: "hello back" },
    { role: "user", content: "and commit" },
  ];
  const fitted = await turn(sent, fresh);
  t.equal(engine.prompts.length - before, 2, "tried with them, then without this turn's");
  t.same(fitted, [...next, ["assistant", "hello back"], ["user", "and commit"]], "the kept memories stay in place");
  t.same(
    (await placed()).map((r) => r.context),
    ["remembered #1: fix the build", "remembered #2: thanks, now test it", null],
    "nothing is kept for a message answered without its memories",
  );

  // When the kept ones do not fit either, none is in the prompt.
  engine.next = "overflow-with-any-memories";
  before = engine.prompts.length;
  const bare = await turn([...sent, { role: "assistant", content: "hello back" }, { role: "user", content: "and push" }], fresh);
  t.equal(engine.prompts.length - before, 3, "with all, with the kept ones, with none");
  t.notOk(
    bare.some(([, content]) => /remembered/.test(content!)),
    "no memories in the prompt that fits",
  );
  engine.next = "answer";
});

t.test("a conversation of its own recalls for each request", async (t) => {
  engine.next = "answer";
  let recalls = 0;
  const counting = { ...deps, recall: { contextFor: async () => `remembered #${++recalls}` } };
  for (const _ of [1, 2]) {
    const { turnId, jobId } = await queued("the same opening");
    t.equal(await runTurn(counting, turnId, jobId, new AbortController().signal), "done");
  }
  t.equal(recalls, 2, "its transcript is new each time: nothing is reused");
  t.same(
    engine.prompts.at(-1)!.map((m) => m.content),
    ["You are Psyche.", "remembered #2", "the same opening"],
  );
});

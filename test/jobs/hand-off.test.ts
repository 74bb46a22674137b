// A turn handed to the worker beside the web role (src/jobs/hand-off.ts): stored already claimed,
// its job inserted taken, and run from memory, handed just before its storing statement runs.
// What it hands over must be what a claim of the same turn would have read back (db/sql/turns.ts,
// claimTurn); the worker writes nothing for it until its store commits, and nothing at all when
// the store fails; the worker holds room for it while it is stored, takes nothing from the queue
// meanwhile, and gets the room back when nothing was stored.
import t, { type Test } from "tap";
import { randomUUID } from "node:crypto";
import { openTurn } from "../../src/conversation/open-turn.js";
import { openCompletion } from "../../src/conversation/open-completion.js";
import { type ClaimedTurn, claimTurn } from "../../src/db/sql/turns.js";
import type { TurnReservation, TurnTaker } from "../../src/jobs/hand-off.js";
import { Channel } from "../../src/jobs/bus.js";
import { INFERENCE_QUEUE, Priority } from "../../src/jobs/queue.js";
import { DREAM_SIGNAL } from "../../src/dreams/dream.js";
import type { TurnRequest } from "../../src/conversation/turn-request.js";
import { testDatabase, turnDeps, userTurn } from "../helpers/database.js";
import { inProcessPsyche } from "../helpers/in-process.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";
import { runTurn } from "../../src/conversation/run-turn.js";
import { standaloneScheduler } from "../../src/inference/scheduler.js";
import { createLogger } from "../../src/log.js";

const db = await testDatabase(t);

/** A worker that only records what it is handed. */
function recordingTaker() {
  const workerId = randomUUID();
  const handed: { jobId: string; turn: ClaimedTurn; stored: Promise<void> }[] = [];
  let open = 0;
  /** Turns being taken in now, and as each was handed. */
  let taking = 0;
  const takingAtHand: number[] = [];
  const taker: TurnTaker = {
    takingIn() {
      taking++;
      let done = false;
      return () => {
        if (!done) taking--;
        done = true;
      };
    },
    reserve(): TurnReservation {
      open++;
      let held = true;
      const end = () => {
        if (held) open--;
        held = false;
      };
      return {
        workerId,
        hand: (taken) => {
          end();
          takingAtHand.push(taking);
          handed.push(taken);
        },
        release: end,
      };
    },
  };
  return { taker, workerId, handed, open: () => open, taking: () => taking, takingAtHand };
}

/** What differs between two stores of the same request: ids and times. */
function comparable(turn: ClaimedTurn) {
  const { id: _id, conversation_id: _c, job_id: _j, worker_id: _w, created_at: _cr, started_at: _s, ...rest } = turn;
  return rest;
}

const jobOf = async (jobId: string) =>
  (await db.pool.query("select state::text, started_on, retry_count from pgboss.job where id = $1", [jobId])).rows[0];

/** The same requests, in order, stored handed (in conversation `a`) and queued, then claimed (in conversation `b`). */
async function bothWays(t: Test, requests: ((conversation: string) => TurnRequest)[]) {
  const a = randomUUID();
  const b = randomUUID();
  const recorder = recordingTaker();
  for (const [i, request] of requests.entries()) {
    const handed = await openTurn(turnDeps(db, { turnTaker: recorder.taker }), request(a));
    handed.follower.close();
    const queued = await openTurn(turnDeps(db), request(b));
    queued.follower.close();
    const jobId: string = (await db.pool.query("select job_id from turns where id = $1", [queued.turnId])).rows[0].job_id;
    const claimed = await claimTurn(db.pool, queued.turnId, jobId, randomUUID());
    const given = recorder.handed[i];
    t.ok(given, `request ${i + 1} was handed`);
    if (!given || !claimed) return;
    t.equal(given.turn.id, handed.turnId);
    t.equal(given.turn.worker_id, recorder.workerId, "claimed for the worker that reserved it");
    t.same(comparable(given.turn), comparable(claimed), `request ${i + 1}: what a claim reads back`);
    t.ok(given.turn.started_at, "started");
    const stored = (await db.pool.query("select status, worker_id, attempts from turns where id = $1", [handed.turnId])).rows[0];
    t.same(stored, { status: "running", worker_id: recorder.workerId, attempts: 1 }, "stored as a claim leaves it");
    const job = await jobOf(given.jobId);
    t.equal(job.state, "active", "its job taken");
    t.ok(job.started_on, "and started, as pg-boss's fetch marks it");
    t.equal(job.retry_count, 0);
    await t.resolves(given.stored, "told that its store committed");
  }
  t.equal(recorder.open(), 0, "every reservation ended");
  t.ok(
    recorder.takingAtHand.every((n) => n === 1),
    "each handed while this process took it in (its engine leaves the JavaScript thread a core meanwhile)",
  );
  t.equal(recorder.taking(), 0, "and taken in once stored");
  const fetched = new Set((await db.boss.fetch(INFERENCE_QUEUE, { batchSize: 50 })).map((j) => j.id));
  t.notOk(
    recorder.handed.some((h) => fetched.has(h.jobId)),
    "no handed turn's job is left for a fetch",
  );
}

t.test("a conversation of its own: handed as its claim would read it", async (t) => {
  await bothWays(t, [
    () =>
      userTurn("hello there", {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hello there" },
        ],
        budget: { maxTokens: 7, field: "max_tokens" },
        sampling: {
          temperature: 0.5,
          topP: 0.9,
          topK: 20,
          seed: 3,
          stop: ["\n\n"],
          presencePenalty: 0.1,
          frequencyPenalty: null,
          logitBias: { "5": 1 },
        },
        scope: "work",
      }),
  ]);
});

t.test("tools, a tool choice, a response format and odd numbers: handed as jsonb and real give them back", async (t) => {
  await bothWays(t, [
    () =>
      userTurn("weather?", {
        tools: [
          {
            name: "weather",
            description: "The weather in a city",
            parameters: { type: "object", required: ["city"], properties: { city: { type: "string", description: "Its name" } } },
          },
        ],
        toolChoice: { name: "weather" },
        parallelToolCalls: false,
        responseFormat: {
          type: "json_schema",
          name: "answer",
          schema: { type: "object", properties: { zeta: { type: "number" }, a: {} } },
          strict: true,
        },
        instructions: "Answer in French.",
        thinking: null,
        sampling: {
          temperature: 0.123456789,
          topP: 0.3,
          topK: null,
          seed: 9007199254740,
          stop: [],
          presencePenalty: -1.0000001,
          frequencyPenalty: 2,
          logitBias: { "10": -100, "9": 0.25 },
        },
      }),
  ]);
});

t.test("a named conversation going on, with tool calls, then rewritten: the kept transcript and the new messages", async (t) => {
  const call = { id: "call_1", name: "lookup", arguments: '{"q":"tides"}' };
  const named = (messages: TurnRequest["messages"]) => (id: string) => userTurn("", { conversation: { kind: "named", id }, messages });
  await bothWays(t, [
    named([
      { role: "user", content: "what are the tides?" },
      { role: "assistant", content: "", toolCalls: [call] },
      { role: "tool", content: "high at noon", toolCallId: "call_1" },
    ]),
    named([
      { role: "user", content: "what are the tides?" },
      { role: "assistant", content: "", toolCalls: [call] },
      { role: "tool", content: "high at noon", toolCallId: "call_1" },
      { role: "user", content: "and tomorrow?" },
    ]),
    // A rewritten history: the stored messages after the first are superseded.
    named([
      { role: "user", content: "what are the tides?" },
      { role: "user", content: "never mind: the weather?" },
    ]),
  ]);
});

t.test("a text completion: handed with no conversation, as its claim reads it", async (t) => {
  const recorder = recordingTaker();
  const request = {
    model: "psyche",
    prompt: "def add(a, b):",
    suffix: "\n\nprint(add(1, 2))",
    sampling: { temperature: 0, topP: null, topK: null, seed: 1, stop: [], presencePenalty: null, frequencyPenalty: null, logitBias: null },
    budget: { maxTokens: 8, field: "max_tokens" },
    stream: true,
  };
  const handed = await openCompletion(turnDeps(db, { turnTaker: recorder.taker }), request);
  handed.follower.close();
  const queued = await openCompletion(turnDeps(db), request);
  queued.follower.close();
  const jobId: string = (await db.pool.query("select job_id from turns where id = $1", [queued.turnId])).rows[0].job_id;
  const claimed = await claimTurn(db.pool, queued.turnId, jobId, randomUUID());
  t.equal(recorder.handed.length, 1);
  t.ok(claimed);
  t.same(comparable(recorder.handed[0]!.turn), comparable(claimed!), "what a claim reads back");
  t.equal((await jobOf(recorder.handed[0]!.jobId)).state, "active");
  t.equal(recorder.open(), 0);
  t.same(recorder.takingAtHand, [1], "handed while taken in");
  t.equal(recorder.taking(), 0, "taken in once stored");
});

t.test("a store that fails after the hand: the worker is told, generates nothing it writes, and ends it unstored", async (t) => {
  const recorder = recordingTaker();
  // A seed past bigint's range (the HTTP layer refuses it: zod's safe integers) fails the
  // storing statement itself, after the turn was handed.
  const seed = 1e30;
  await t.rejects(
    openTurn(turnDeps(db, { turnTaker: recorder.taker }), userTurn("hello", { sampling: { ...userTurn("").sampling, seed } })),
  );
  t.equal(recorder.handed.length, 1, "handed before the statement ran");
  t.equal(recorder.open(), 0, "the reservation ended");
  t.equal(recorder.taking(), 0, "no longer taken in once the store failed");
  const handed = recorder.handed[0]!;
  await t.rejects(handed.stored, "told that its store failed");
  const engine = new ScriptedEngine(() => ({ text: "never written" }));
  const deps = { ...db, model: standaloneScheduler(engine), log: createLogger("silent"), workerId: recorder.workerId, persona: "" };
  const outcome = await runTurn(deps, handed.turn.id, handed.jobId, new AbortController().signal, handed);
  t.equal(outcome, "unstored");
  const rows = await db.pool.query(
    "select (select count(*)::int from turns where id = $1) as turns, (select count(*)::int from turn_events where turn_id = $1) as events, (select count(*)::int from pgboss.job where id = $2) as jobs",
    [handed.turn.id, handed.jobId],
  );
  t.same(rows.rows[0], { turns: 0, events: 0, jobs: 0 }, "no turn, no event, no job");
});

t.test("a turn handed while it is stored: generated meanwhile, its events written only once the store commits", async (t) => {
  const recorder = recordingTaker();
  const opened = await openTurn(turnDeps(db, { turnTaker: recorder.taker }), userTurn("hello while storing"));
  opened.follower.close();
  const handed = recorder.handed[0]!;
  // The worker's side as the hand gives it, with a store still under way (this one committed already).
  let commit!: () => void;
  const stored = new Promise<void>((resolve) => (commit = resolve));
  let generated!: () => void;
  const began = new Promise<void>((resolve) => (generated = resolve));
  const engine = new ScriptedEngine(() => {
    generated();
    return { text: "hello back" };
  });
  const deps = { ...db, model: standaloneScheduler(engine), log: createLogger("silent"), workerId: recorder.workerId, persona: "" };
  const run = runTurn(deps, handed.turn.id, handed.jobId, new AbortController().signal, { turn: handed.turn, stored });
  await began;
  await new Promise((r) => setTimeout(r, 100));
  const before = await db.pool.query(
    "select status, (select count(*)::int from turn_events e where e.turn_id = t.id) as events from turns t where id = $1",
    [handed.turn.id],
  );
  t.same(before.rows[0], { status: "running", events: 0 }, "generated, nothing written while the store is under way");
  commit();
  t.equal(await run, "done");
  const after = await db.pool.query("select status, content from turns where id = $1", [handed.turn.id]);
  t.same(after.rows[0], { status: "done", content: "hello back" }, "written once it committed");
});

t.test("nothing stored, nothing handed: the room is given back", async (t) => {
  const recorder = recordingTaker();
  // A tool result that answers no call: refused inside the storing, after the room was reserved.
  const bad = userTurn("", { messages: [{ role: "tool", content: "42", toolCallId: "call_nowhere" }] });
  await t.rejects(openTurn(turnDeps(db, { turnTaker: recorder.taker }), bad), /tool/i);
  t.equal(recorder.handed.length, 0);
  t.equal(recorder.open(), 0, "the reservation ended");
  t.equal(recorder.taking(), 0, "no longer taken in once refused");
  const left = await db.pool.query("select count(*)::int as n from turns t join messages m on m.turn_id = t.id where m.content = '42'");
  t.equal(left.rows[0].n, 0, "and nothing was written");
});

t.test("the worker: room held while a turn is stored, nothing taken meanwhile, handed chats answered", async (t) => {
  const psyche = await inProcessPsyche(
    t,
    { recallPromptTokens: 0, pollMs: 60_000 },
    { engine: new ScriptedEngine(() => ({ text: "ok" }), 2) },
  );
  const { worker } = psyche;
  const chat = (content: string) =>
    psyche
      .request("/v1/chat/completions", { body: { model: "psyche", messages: [{ role: "user", content }], max_tokens: 4 } })
      .then(async (r) => ({ status: r.status, body: (await r.json()) as { choices?: { message: { content: string } }[] } }));

  // Once the worker's first look found the queue empty, a chat is handed: answered, never fetched.
  const deadline = Date.now() + 20_000;
  let first = worker.reserve();
  while (!first && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    first = worker.reserve();
  }
  t.ok(first, "an idle worker has room");
  first?.release();
  const before = worker.handed;
  const answered = await chat("hello");
  t.equal(answered.status, 200);
  t.equal(answered.body.choices?.[0]?.message.content, "ok");
  t.equal(worker.handed, before + 1, "the chat was handed");
  const turn = (await psyche.db.pool.query("select attempts, status from turns order by created_at desc limit 1")).rows[0];
  t.same(turn, { attempts: 1, status: "done" });

  // Twice the two slots: four reservations, then none.
  const held = [1, 2, 3, 4].map(() => worker.reserve());
  t.ok(held.every(Boolean), "as many as the worker takes");
  t.equal(worker.reserve(), undefined, "no room past them");
  held[0]?.release();
  held[0]?.release();
  const again = worker.reserve();
  t.ok(again, "a released one is room again, once");
  t.equal(worker.reserve(), undefined);

  // While reservations are open the loop takes nothing: a reverie queued now waits for them.
  await psyche.db.boss.send(INFERENCE_QUEUE, { kind: "dream", maxTokens: 4 }, { priority: Priority.dream });
  psyche.db.bus.notify(Channel.jobs, DREAM_SIGNAL);
  t.equal(worker.reserve(), undefined, "and none while something waits that only a fetch finds");
  await new Promise((r) => setTimeout(r, 300));
  const waiting = await psyche.db.pool.query("select state::text from pgboss.job where name = $1 and data->>'kind' = 'dream'", [
    INFERENCE_QUEUE,
  ]);
  t.same(
    waiting.rows.map((r) => r.state),
    ["created"],
    "the reverie is not taken beside the turns being stored",
  );
  for (const r of [again, ...held.slice(1)]) r?.release();
  const taken = Date.now() + 20_000;
  let state = "created";
  while (state === "created" && Date.now() < taken) {
    await new Promise((r) => setTimeout(r, 50));
    state = (
      await psyche.db.pool.query("select state::text from pgboss.job where name = $1 and data->>'kind' = 'dream'", [INFERENCE_QUEUE])
    ).rows[0].state;
  }
  t.not(state, "created", "once they ended, the worker fetched it");
});

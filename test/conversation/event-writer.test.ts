// A turn's event writer says when its first event is written (src/conversation/event-writer.ts,
// onFirstWrite), once: the worker leaves the server's thread a core until then (run-turn.ts,
// holdCore). Also where the turn was lost before any write, or ends with nothing written, so the
// core is never held past the turn.
import t from "tap";
import { randomUUID } from "node:crypto";
import { openTurn } from "../../src/conversation/open-turn.js";
import { claimTurn } from "../../src/db/sql/turns.js";
import { EventBatch } from "../../src/conversation/event-batch.js";
import { EventWriter } from "../../src/conversation/event-writer.js";
import { LocalBus } from "../../src/jobs/bus.js";
import { testDatabase, turnDeps, userTurn } from "../helpers/database.js";

const db = await testDatabase(t);

/** A stored turn claimed by `workerId`, running. */
async function runningTurn(workerId: string): Promise<string> {
  const opened = await openTurn(turnDeps(db), userTurn(`writer ${randomUUID()}`));
  opened.follower.close();
  const jobId: string = (await db.pool.query("select job_id from turns where id = $1", [opened.turnId])).rows[0].job_id;
  t.ok(await claimTurn(db.pool, opened.turnId, jobId, workerId), "claimed");
  return opened.turnId;
}

function writer(turnId: string, workerId: string, calls: string[], stops: string[] = []) {
  return new EventWriter({
    events: new EventBatch(db.pool),
    bus: new LocalBus(),
    turnId,
    workerId,
    lastSeq: 0,
    flushMs: () => 0,
    onStop: (reason) => stops.push(reason),
    onFirstWrite: () => calls.push("first write"),
  });
}

const written = async (turnId: string) =>
  (await db.pool.query<{ content: string }>("select content from turn_events where turn_id = $1 order by seq", [turnId])).rows.map(
    (r) => r.content,
  );

t.test("called once the first event is written, and only once", async (t) => {
  const worker = randomUUID();
  const turnId = await runningTurn(worker);
  const calls: string[] = [];
  const w = writer(turnId, worker, calls);
  w.push("Hello", 1);
  t.same(calls, [], "not before the write has answered");
  await w.flush();
  t.same(calls, ["first write"]);
  t.same(await written(turnId), ["Hello"], "after the event was stored");
  w.push(" there", 1);
  await w.flush();
  t.same(await w.drain(), undefined);
  t.same(calls, ["first write"], "once");
});

t.test("called where the turn is lost before any event is written", async (t) => {
  const turnId = await runningTurn(randomUUID());
  const calls: string[] = [];
  const stops: string[] = [];
  const w = writer(turnId, randomUUID(), calls, stops);
  w.push("not mine", 1);
  await w.flush();
  t.same(stops, ["lost"]);
  t.same(calls, ["first write"]);
  t.same(await written(turnId), [], "nothing written for another worker's turn");
});

t.test("called where the turn ends with nothing written", async (t) => {
  const worker = randomUUID();
  const calls: string[] = [];
  const w = writer(await runningTurn(worker), worker, calls);
  t.same(await w.drain(), undefined);
  t.same(calls, ["first write"]);
});

// A turn's event writer says when its first event is written (src/conversation/event-writer.ts,
// onFirstWrite), once: the worker leaves the server's thread a core until then (run-turn.ts,
// holdCore). Also where the turn was lost before any write, or ends with nothing written, so the
// core is never held past the turn.
import t from "tap";
import { randomUUID } from "node:crypto";
import { EventBatch } from "../../src/conversation/event-batch.js";
import { EventWriter } from "../../src/conversation/event-writer.js";
import { LocalBus } from "../../src/jobs/bus.js";
import { runningTurn, testDatabase } from "../helpers/database.js";

const db = await testDatabase(t);
const running = (workerId: string) => runningTurn(db, workerId, "writer");

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
  const turnId = await running(worker);
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
  const turnId = await running(randomUUID());
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
  const w = writer(await running(worker), worker, calls);
  t.same(await w.drain(), undefined);
  t.same(calls, ["first write"]);
});

// A worker's event writes of one moment, in one statement (src/conversation/event-batch.ts):
// each row is still checked on its own, as appendEvent checks it (the worker holds the turn,
// its seq is free, cancellation asked), and a row that fails the statement fails only itself.
import t from "tap";
import { randomUUID } from "node:crypto";
import { EventBatch } from "../../src/conversation/event-batch.js";
import type { EventAppend } from "../../src/db/sql/turn-events.js";
import { runningTurn, testDatabase } from "../helpers/database.js";

const db = await testDatabase(t);
const running = (workerId: string) => runningTurn(db, workerId, "batch");

const events = async (turnId: string) =>
  (await db.pool.query("select seq, kind, content, tokens from turn_events where turn_id = $1 order by seq", [turnId])).rows;

const row = (turnId: string, workerId: string, seq: number, content: string, kind: EventAppend["kind"] = "delta"): EventAppend => ({
  turnId,
  workerId,
  seq,
  kind,
  content,
  tokens: content.length,
});

t.test("the writes of one moment go in one statement, each turn's own event written", async (t) => {
  const worker = randomUUID();
  const turns = [await running(worker), await running(worker), await running(worker)];
  const batch = new EventBatch(db.pool);
  const results = await Promise.all([
    batch.append(row(turns[0]!, worker, 1, "first")),
    batch.append(row(turns[1]!, worker, 1, "thinking", "reasoning")),
    batch.append(row(turns[2]!, worker, 1, "third")),
  ]);
  t.same(batch.stats, { statements: 1, rows: 3 }, "one statement for the three");
  t.same(results, Array(3).fill({ written: true, cancelRequested: false }));
  t.same(await events(turns[0]!), [{ seq: 1, kind: "delta", content: "first", tokens: 5 }]);
  t.same(await events(turns[1]!), [{ seq: 1, kind: "reasoning", content: "thinking", tokens: 8 }]);
  t.same(await events(turns[2]!), [{ seq: 1, kind: "delta", content: "third", tokens: 5 }]);
  // The next moment's writes are a statement of their own.
  t.same(await batch.append(row(turns[0]!, worker, 2, " again")), { written: true, cancelRequested: false });
  t.same(batch.stats, { statements: 2, rows: 4 });
  t.same(
    (await events(turns[0]!)).map((e) => e.content),
    ["first", " again"],
  );
});

t.test("each row is checked on its own: another worker's turn, a taken seq, a cancelled turn", async (t) => {
  const worker = randomUUID();
  const [held, other, cancelled] = [await running(worker), await running(randomUUID()), await running(worker)];
  const batch = new EventBatch(db.pool);
  t.same(await batch.append(row(held, worker, 1, "mine")), { written: true, cancelRequested: false });
  await db.pool.query("update turns set cancel_requested_at = now() where id = $1", [cancelled]);
  const results = await Promise.all([
    batch.append(row(held, worker, 1, "the same seq again")),
    batch.append(row(other, worker, 1, "not mine")),
    batch.append(row(cancelled, worker, 1, "cancel asked")),
    batch.append(row(held, worker, 2, "next")),
  ]);
  t.equal(batch.stats.statements, 2, "the four in one statement");
  t.same(results, [
    { written: false, cancelRequested: false },
    { written: false, cancelRequested: false },
    { written: true, cancelRequested: true },
    { written: true, cancelRequested: false },
  ]);
  t.same(
    (await events(held)).map((e) => e.content),
    ["mine", "next"],
    "the taken seq kept what it held",
  );
  t.same(await events(other), [], "nothing written to a turn another worker holds");
  t.same(
    (await events(cancelled)).map((e) => e.content),
    ["cancel asked"],
  );
});

t.test("a row that fails the statement fails alone: the others are written", async (t) => {
  const worker = randomUUID();
  const [a, b] = [await running(worker), await running(worker)];
  const batch = new EventBatch(db.pool);
  const results = await Promise.allSettled([
    batch.append(row(a, worker, 1, "fine")),
    batch.append(row("not-a-turn-id", worker, 1, "bad")),
    batch.append(row(b, worker, 1, "also fine")),
  ]);
  t.same(results[0], { status: "fulfilled", value: { written: true, cancelRequested: false } });
  t.equal(results[1]!.status, "rejected", "the bad row's write fails");
  t.same(results[2], { status: "fulfilled", value: { written: true, cancelRequested: false } });
  t.same(
    (await events(a)).map((e) => e.content),
    ["fine"],
  );
  t.same(
    (await events(b)).map((e) => e.content),
    ["also fine"],
  );
});

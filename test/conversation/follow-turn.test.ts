// The follower relays an event carried by a signal only when it is the next one; otherwise
// the table decides. Real embedded Postgres.
import t from "tap";
import { randomUUID } from "node:crypto";
import { TurnFollower } from "../../src/conversation/follow-turn.js";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { createPool } from "../../src/db/pool.js";
import type { TurnEvent } from "../../src/db/sql/turn-events.js";
import { Channel, LocalBus } from "../../src/jobs/bus.js";
import { encodeTurnSignal } from "../../src/jobs/turn-signal.js";
import { seededDir } from "../helpers/db-template.js";

const db = await startEmbeddedDatabase({ dataDir: await seededDir(t), port: 0 });
t.teardown(() => db.stop());
const pool = createPool(db.connectionString, 2);
t.teardown(() => pool.end());
await migrate(pool);
const bus = new LocalBus();

async function newTurn(): Promise<string> {
  const id = randomUUID();
  await pool.query("insert into conversations (id) values ($1) on conflict do nothing", ["c"]);
  await pool.query("insert into turns (id, conversation_id, model, max_tokens) values ($1, 'c', 'psyche', 10)", [id]);
  return id;
}
const insertEvent = (turnId: string, e: TurnEvent) =>
  pool.query("insert into turn_events (turn_id, seq, kind, content) values ($1, $2, $3, $4)", [turnId, e.seq, e.kind, e.content]);

/** Writes each event, then announces it with its signal, as the worker does. */
async function publish(turnId: string, events: TurnEvent[]): Promise<void> {
  for (const e of events) {
    await insertEvent(turnId, e);
    bus.notify(Channel.turn, encodeTurnSignal(turnId, e));
  }
}

async function collect(follower: TurnFollower, after = 0, o: { fresh?: boolean; timeoutMs?: number } = {}): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for await (const e of follower.events({ afterSeq: after, fresh: o.fresh ?? false, signal: AbortSignal.timeout(o.timeoutMs ?? 5000) }))
    out.push(e);
  return out;
}

t.test("events in order, from signals and from the table", async (t) => {
  const id = await newTurn();
  const follower = new TurnFollower({ pool, bus, pollMs: 50 }, id);
  const done = collect(follower);
  await publish(id, [
    { seq: 1, kind: "delta", content: "a" },
    { seq: 2, kind: "delta", content: "b" },
  ]);
  // seq 3 is written but its signal is lost; seq 4 (done) is signalled: a gap, so the
  // follower must read 3 from the table rather than jump to 4.
  await insertEvent(id, { seq: 3, kind: "delta", content: "c" });
  await insertEvent(id, { seq: 4, kind: "done", content: "stop" });
  bus.notify(Channel.turn, encodeTurnSignal(id, { seq: 4, kind: "done", content: "stop" }));
  t.same(
    (await done).map((e) => e.content),
    ["a", "b", "c", "stop"],
  );
});

t.test("signals for other turns are not relayed", async (t) => {
  const id = await newTurn();
  const follower = new TurnFollower({ pool, bus, pollMs: 50 }, id);
  const done = collect(follower);
  bus.notify(Channel.turn, encodeTurnSignal(randomUUID(), { seq: 1, kind: "delta", content: "not mine" }));
  await insertEvent(id, { seq: 1, kind: "delta", content: "mine" });
  await insertEvent(id, { seq: 2, kind: "done", content: "stop" });
  t.same(
    (await done).map((e) => e.content),
    ["mine", "stop"],
    "found by polling, without a signal",
  );
});

/** The real pool, counting the follower's reads of the events table. */
function countingPool(): { pool: typeof pool; reads: () => number } {
  let reads = 0;
  const counting = new Proxy(pool, {
    get(target, key, receiver) {
      if (key !== "query") return Reflect.get(target, key, receiver) as unknown;
      return (text: unknown, ...rest: unknown[]) => {
        if (typeof text === "string" && text.includes("from turn_events")) reads++;
        return (target.query as (...args: unknown[]) => unknown)(text, ...rest);
      };
    },
  });
  return { pool: counting, reads: () => reads };
}

t.test("a closing event carried by its signal is relayed without reading the table", async (t) => {
  const id = await newTurn();
  const counted = countingPool();
  const follower = new TurnFollower({ pool: counted.pool, bus, pollMs: 1000 }, id);
  const done = collect(follower, 0, { fresh: true });
  await publish(id, [
    { seq: 1, kind: "delta", content: "hi" },
    { seq: 2, kind: "done", content: "stop" },
  ]);
  t.same(
    (await done).map((e) => e.kind),
    ["delta", "done"],
  );
  t.equal(counted.reads(), 0, "no read: both events came with their signals");
});

// Where every signal reaches the follower, polling is a safety net: while nothing happens it
// reads less and less often (up to 8 polls apart). Where signals from other processes cannot
// arrive (the polling fallback), polling is how it learns anything, so it keeps to pollMs.
// Counts, not timings: a loaded machine can only make either follower read less.
for (const complete of [true, false]) {
  t.test(`an idle follower ${complete ? "backs off where signals reach it" : "keeps polling on the polling fallback"}`, async (t) => {
    const id = await newTurn();
    const counted = countingPool();
    const follower = new TurnFollower({ pool: counted.pool, bus: new LocalBus(complete), pollMs: 20 }, id);
    const done = collect(follower, 0, { fresh: true, timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 1000));
    const idleReads = counted.reads();
    // Found without a signal, by polling, in either mode.
    await insertEvent(id, { seq: 1, kind: "done", content: "stop" });
    t.same(
      (await done).map((e) => e.content),
      ["stop"],
    );
    // 1 s of silence: 20, 40, 80, 160, 160, ... ms apart is 8 reads (10 allows this test's own
    // timer to be late); every 20 ms, 50.
    if (complete) t.ok(idleReads <= 10, `${idleReads} reads in 1 s of silence`);
    else t.ok(idleReads > 12, `${idleReads} reads in 1 s of silence`);
  });
}

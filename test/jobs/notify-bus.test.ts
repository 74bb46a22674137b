// Signals between processes over a real PostgreSQL's LISTEN/NOTIFY (PSYCHE_TEST_POSTGRES;
// scripts/test-postgres.sh runs this): the signals of one turn of the event loop go out in one
// statement, one such statement at a time (those that come meanwhile wait for the next), arrive
// in order, and a process does not hear its own twice.
import t from "tap";
import { createPool, type Pool } from "../../src/db/pool.js";
import { createLogger } from "../../src/log.js";
import { Channel, createBus } from "../../src/jobs/bus.js";
import { TEST_POSTGRES, testDatabaseUrl } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";

/**
 * The sending process's pool, watched: its notify statements, and the most on their way at once.
 * With `held` set, the next notify statement's answer reaches the bus only once it settles: the
 * statement stays on its way however fast the database answers.
 */
function watchedNotifies(pool: Pool) {
  const seen = { statements: 0, inFlight: 0, mostInFlight: 0 };
  const control: { held?: Promise<void> } = {};
  const watched = Object.create(pool) as Pool;
  watched.query = ((...args: unknown[]) => {
    let result = (pool.query as (...a: unknown[]) => Promise<unknown>).apply(pool, args);
    if (/pg_notify/.test(String(args[0]))) {
      const held = control.held;
      control.held = undefined;
      if (held) result = result.then(async (r) => (await held, r));
      seen.statements++;
      seen.mostInFlight = Math.max(seen.mostInFlight, ++seen.inFlight);
      void result.finally(() => seen.inFlight--).catch(() => undefined);
    }
    return result;
  }) as Pool["query"];
  return { pool: watched, seen, control };
}

/** Waits for `all` signals to be heard, at most 5 s. */
const arrived = (all: Promise<void>) =>
  Promise.race([all, new Promise((_, reject) => setTimeout(() => reject(new Error("not all signals arrived")), 5000))]);

const url = await testDatabaseUrl(serverDir(t));
if (!url) {
  t.pass(`needs a real PostgreSQL (PSYCHE_TEST_POSTGRES${TEST_POSTGRES ? "" : " is not set"}): npm run test:postgres runs it`);
} else {
  t.test("a burst of signals: one statement, every one delivered, in order, once", async (t) => {
    const log = createLogger("warn");
    const poolA = createPool(url, 2);
    const poolB = createPool(url, 2);
    t.teardown(async () => {
      await poolA.end();
      await poolB.end();
    });
    const sender = watchedNotifies(poolA);
    const a = await createBus({ pool: sender.pool, connectionString: url, embeddedInProcess: false, log });
    const b = await createBus({ pool: poolB, connectionString: url, embeddedInProcess: false, log });
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    t.equal(a.mode, "local+notify", "NOTIFY reaches the other process");
    t.ok(a.complete && b.complete, "so every signal reaches each of them");

    const heardByB: string[] = [];
    const heardByA: string[] = [];
    const all = new Promise<void>((resolve) =>
      b.subscribe(Channel.turn, (p) => {
        heardByB.push(p);
        if (heardByB.length === 20) resolve();
      }),
    );
    a.subscribe(Channel.turn, (p) => heardByA.push(p));

    const probes = sender.seen.statements;
    for (let i = 0; i < 20; i++) a.notify(Channel.turn, `signal ${i}`);
    await arrived(all);
    t.same(
      heardByB,
      Array.from({ length: 20 }, (_, i) => `signal ${i}`),
      "the other process heard all twenty, in order",
    );
    t.equal(sender.seen.statements - probes, 1, "in one statement");
    await new Promise((r) => setTimeout(r, 200));
    t.equal(heardByA.length, 20, "the sender heard each once (locally), not again from NOTIFY");
  });

  t.test("signals that come while a statement is on its way go in the next, one at a time, in order", async (t) => {
    const log = createLogger("warn");
    const poolA = createPool(url, 4);
    const poolB = createPool(url, 2);
    const sender = watchedNotifies(poolA);
    const a = await createBus({ pool: sender.pool, connectionString: url, embeddedInProcess: false, log });
    const b = await createBus({ pool: poolB, connectionString: url, embeddedInProcess: false, log });
    t.teardown(async () => {
      await a.close();
      await b.close();
      await poolA.end();
      await poolB.end();
    });
    const heard: string[] = [];
    const all = new Promise<void>((resolve) =>
      b.subscribe(Channel.turn, (p) => {
        heard.push(p);
        if (heard.length === 30) resolve();
      }),
    );
    const probes = sender.seen.statements;
    // Ten turns of the event loop, three signals each: a burst of chats' streams. The first
    // statement is held on its way through all ten (a fast database may answer within one
    // turn, and then nothing would wait for a next), so what comes meanwhile must wait.
    let release!: () => void;
    sender.control.held = new Promise<void>((r) => (release = r));
    for (let i = 0; i < 10; i++) {
      for (let j = 0; j < 3; j++) a.notify(Channel.turn, `signal ${i * 3 + j}`);
      await new Promise((r) => setImmediate(r));
    }
    release();
    await arrived(all);
    const statements = sender.seen.statements - probes;
    t.same(
      heard,
      Array.from({ length: 30 }, (_, i) => `signal ${i}`),
      "all thirty heard, in order",
    );
    t.equal(sender.seen.mostInFlight, 1, "one statement at a time");
    t.ok(!sender.control.held, "the first statement was held");
    t.equal(statements, 2, "the first turn's signals in one statement, the other nine turns' together in the next");
  });
}

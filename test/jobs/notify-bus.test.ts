// Signals between processes over a real PostgreSQL's LISTEN/NOTIFY (PSYCHE_TEST_POSTGRES;
// scripts/test-postgres.sh runs this): the signals of one turn of the event loop go out in one
// statement, one such statement at a time (those that come meanwhile wait for the next), arrive
// in order, and a process does not hear its own twice.
import t from "tap";
import pg from "pg";
import { createPool } from "../../src/db/pool.js";
import { createLogger } from "../../src/log.js";
import { Channel, createBus } from "../../src/jobs/bus.js";
import { TEST_POSTGRES, testDatabaseUrl } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";

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
    const a = await createBus({ pool: poolA, connectionString: url, embeddedInProcess: false, log });
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

    const original = pg.Client.prototype.query;
    let notifyStatements = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0] as string | { text?: string };
      if (/pg_notify/.test(typeof first === "string" ? first : (first?.text ?? ""))) notifyStatements++;
      return (original as (...x: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      for (let i = 0; i < 20; i++) a.notify(Channel.turn, `signal ${i}`);
      await Promise.race([all, new Promise((_, reject) => setTimeout(() => reject(new Error("not all signals arrived")), 5000))]);
    } finally {
      pg.Client.prototype.query = original;
    }
    t.same(
      heardByB,
      Array.from({ length: 20 }, (_, i) => `signal ${i}`),
      "the other process heard all twenty, in order",
    );
    t.equal(notifyStatements, 1, "in one statement");
    await new Promise((r) => setTimeout(r, 200));
    t.equal(heardByA.length, 20, "the sender heard each once (locally), not again from NOTIFY");
  });

  t.test("signals that come while a statement is on its way go in the next, one at a time, in order", async (t) => {
    const log = createLogger("warn");
    const poolA = createPool(url, 4);
    const poolB = createPool(url, 2);
    const a = await createBus({ pool: poolA, connectionString: url, embeddedInProcess: false, log });
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
    const original = pg.Client.prototype.query;
    let statements = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0] as string | { text?: string };
      const result = (original as (...x: unknown[]) => unknown).apply(this, args);
      if (/pg_notify/.test(typeof first === "string" ? first : (first?.text ?? ""))) {
        statements++;
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        void (result as Promise<unknown>).finally(() => inFlight--);
      }
      return result;
    } as typeof original;
    try {
      // Ten turns of the event loop, three signals each: a burst of chats' streams.
      for (let i = 0; i < 10; i++) {
        for (let j = 0; j < 3; j++) a.notify(Channel.turn, `signal ${i * 3 + j}`);
        await new Promise((r) => setImmediate(r));
      }
      await Promise.race([all, new Promise((_, reject) => setTimeout(() => reject(new Error("not all signals arrived")), 5000))]);
    } finally {
      pg.Client.prototype.query = original;
    }
    t.same(
      heard,
      Array.from({ length: 30 }, (_, i) => `signal ${i}`),
      "all thirty heard, in order",
    );
    t.equal(mostInFlight, 1, "one statement at a time");
    t.ok(statements < 10, `fewer statements than turns of the loop (${statements})`);
  });
}

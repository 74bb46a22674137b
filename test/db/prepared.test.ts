// Prepared statements on the embedded server, where every connection shares one backend.
import t from "tap";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { createPool, inTransaction } from "../../src/db/pool.js";
import pg from "pg";
import { pgConnectionOf, statementName } from "../../src/db/prepared.js";
import { seededDir } from "../helpers/db-template.js";

const db = await startEmbeddedDatabase({ dataDir: await seededDir(t, "bare"), port: 0 });
t.teardown(() => db.stop());

const QUERY = "select $1::int + 1 as n";

t.test("a statement prepared by one pool is reused by another, in and out of transactions", async (t) => {
  const a = createPool(db.connectionString, 2);
  await a.query("create table if not exists prepared_probe (n int)");
  t.equal((await a.query(QUERY, [1])).rows[0].n, 2);
  const names = await a.query("select name from pg_prepared_statements where name = $1", [statementName(QUERY)]);
  t.equal(names.rowCount, 1, "prepared under its name");
  await a.end(); // the statement outlives the connection in the shared backend

  const b = createPool(db.connectionString, 2);
  t.teardown(() => b.end());
  const sum = await inTransaction(b, async (client) => {
    // the same text again, inside a transaction: a failed Parse here would abort it
    const r = await client.query(QUERY, [41]);
    await client.query("insert into prepared_probe (n) values ($1)", [r.rows[0].n]);
    return r.rows[0].n;
  });
  t.equal(sum, 42);
  t.same((await b.query("select n from prepared_probe")).rows, [{ n: 42 }], "the transaction committed");
});

t.test("queries on one client keep their order", async (t) => {
  const pool = createPool(db.connectionString, 1);
  t.teardown(() => pool.end());
  const client = await pool.connect();
  const order: number[] = [];
  // Not awaited one by one: the first needs an existence check, the second does not.
  await Promise.all([
    client.query("select $1::int as n, pg_sleep(0.01)", [1]).then(() => order.push(1)),
    client.query("select 2 as n").then(() => order.push(2)),
    client.query(QUERY, [2]).then(() => order.push(3)),
  ]);
  client.release();
  t.same(order, [1, 2, 3]);
});

t.test("losing the race to prepare inside a transaction does not abort it", async (t) => {
  const text = "select $1::int * 3 as n";
  const other = createPool(db.connectionString, 1);
  t.teardown(() => other.end());
  const pool = createPool(db.connectionString, 1);
  t.teardown(() => pool.end());
  // Another connection prepares it first (before our transaction: the embedded server makes
  // other connections wait while a transaction is open)...
  await other.query(text, [1]);
  const client = await pool.connect();
  await client.query("begin");
  await client.query("insert into prepared_probe (n) values ($1)", [7]);
  // ...and this connection, as if its existence check had come just before that, prepares too.
  const first = (
    client as unknown as {
      prepareFirst(name: string, text: string, values: unknown[], shared: Set<string>): Promise<{ rows: { n: number }[] }>;
    }
  ).prepareFirst(statementName(text), text, [5], new Set());
  t.equal((await first).rows[0]?.n, 15, "the statement the other connection prepared is used");
  await client.query("commit");
  client.release();
  t.same((await pool.query("select n from prepared_probe where n = $1", [7])).rows, [{ n: 7 }], "the transaction was not aborted");
});

t.test("many connections using new statements at once", async (t) => {
  const pools = [createPool(db.connectionString, 3), createPool(db.connectionString, 3)];
  t.teardown(() => Promise.all(pools.map((p) => p.end())));
  const texts = Array.from({ length: 20 }, (_, i) => `select $1::int + ${i} as n`);
  const results = await Promise.all(
    texts.flatMap((text, i) =>
      pools.flatMap((p) => [p.query(text, [1]), p.query(text, [1])]).map((q) => q.then((r) => r.rows[0].n === 1 + i)),
    ),
  );
  t.ok(results.every(Boolean), `${results.length} first uses, all answered`);
});

t.test("pg's internals are checked at construction, so an upgrade that changes them fails loudly", async (t) => {
  t.doesNotThrow(() => pgConnectionOf(new pg.Client()), "pg 8.23.1's Client has what prepared.ts relies on");
  t.throws(() => pgConnectionOf({}), /pg's Client internals are not the ones src\/db\/prepared.ts was written for/);
  t.throws(() => pgConnectionOf({ connection: { on: () => undefined } }), /install the version package.json pins/, "no parsedStatements");
});

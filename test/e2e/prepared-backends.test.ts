// Which round trips preparing a statement costs, by kind of server: on the embedded one (one
// backend shared by every connection) a connection asks whether the backend has the statement,
// under a savepoint inside a transaction; on a real PostgreSQL (PSYCHE_TEST_POSTGRES) each
// connection has its own backend and prepares at once (src/db/prepared.ts).
import t from "tap";
import pg from "pg";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { createPool, inTransaction } from "../../src/db/pool.js";
import { statementName } from "../../src/db/prepared.js";
import { TEST_POSTGRES, testDatabaseUrl } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";
import { seededDir } from "../helpers/db-template.js";

const QUERY = "select $1::int * 2 as n";

/** The texts every pg Client sends while `fn` runs. */
async function sent<T>(fn: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
  const original = pg.Client.prototype.query;
  const texts: string[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    texts.push(typeof first === "string" ? first : (first?.text ?? ""));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await fn(), texts };
  } finally {
    pg.Client.prototype.query = original;
  }
}

async function prepareInTransaction(url: string) {
  const pool = createPool(url, 1);
  try {
    return await sent(() =>
      inTransaction(pool, async (client) => {
        const a = (await client.query(QUERY, [2])).rows[0].n;
        const b = (await client.query(QUERY, [21])).rows[0].n;
        const held = (await client.query("select count(*)::int as n from pg_prepared_statements where name = $1", [statementName(QUERY)]))
          .rows[0].n;
        return { a, b, held };
      }),
    );
  } finally {
    await pool.end();
  }
}

t.test("on the embedded server, a connection asks before it prepares, under a savepoint in a transaction", async (t) => {
  const db = await startEmbeddedDatabase({ dataDir: await seededDir(t, "bare"), port: 0 });
  t.teardown(() => db.stop());
  const { result, texts } = await prepareInTransaction(db.connectionString);
  t.same(result, { a: 4, b: 42, held: 1 });
  t.ok(
    texts.some((q) => q.includes("from pg_prepared_statements where name")),
    "it asked",
  );
  t.ok(texts.includes("savepoint psyche_prepare"), "under a savepoint");
});

const asks = (texts: string[]) => texts.filter((q) => q === "select 1 from pg_prepared_statements where name = $1").length;

t.test("on the embedded server, what one connection learnt the others know: no question twice", async (t) => {
  const db = await startEmbeddedDatabase({ dataDir: await seededDir(t, "bare"), port: 0 });
  t.teardown(() => db.stop());
  const text = "select $1::int + 100 as n";
  const first = createPool(db.connectionString, 1);
  const { texts: firstTexts } = await sent(() => first.query(text, [1]));
  t.equal(asks(firstTexts), 1, "the first connection asks");
  await first.end();
  // A new pool's connections (ten at once, as a burst of chats opens them) do not ask again.
  const pool = createPool(db.connectionString, 10);
  t.teardown(() => pool.end());
  const { result, texts } = await sent(() =>
    Promise.all(Array.from({ length: 10 }, (_, i) => inTransaction(pool, (c) => c.query(text, [i])).then((r) => r.rows[0].n))),
  );
  t.same(
    result,
    Array.from({ length: 10 }, (_, i) => 100 + i),
    "every connection ran it",
  );
  t.equal(asks(texts), 0, "none asked");
  t.notOk(texts.includes("savepoint psyche_prepare"), "none prepared it again");
});

t.test("a restarted embedded server on the same port is a new backend: its statements are asked for again", async (t) => {
  const dataDir = serverDir(t);
  const text = "select $1::int + 200 as n";
  const before = await startEmbeddedDatabase({ dataDir, port: 0 });
  const first = createPool(before.connectionString, 1);
  t.equal((await first.query(text, [1])).rows[0].n, 201);
  await first.end();
  await before.stop();
  const after = await startEmbeddedDatabase({ dataDir, port: before.port });
  t.teardown(() => after.stop());
  t.equal(after.connectionString, before.connectionString, "the same address");
  const pool = createPool(after.connectionString, 1);
  t.teardown(() => pool.end());
  const { result, texts } = await sent(() => pool.query(text, [2]));
  t.equal(result.rows[0].n, 202, "answered, not 'prepared statement does not exist'");
  t.equal(asks(texts), 1, "asked the new backend");
});

t.test("on a real PostgreSQL, a connection prepares at once", { skip: TEST_POSTGRES ? false : "needs PSYCHE_TEST_POSTGRES" }, async (t) => {
  const url = (await testDatabaseUrl(serverDir(t)))!;
  const { result, texts } = await prepareInTransaction(url);
  t.same(result, { a: 4, b: 42, held: 1 }, "prepared under its name, and used twice");
  const asked = texts.filter(
    (q) =>
      q.includes("from pg_prepared_statements where name = $1") &&
      q !== "select count(*)::int as n from pg_prepared_statements where name = $1",
  );
  t.same(asked, [], "no question about the backend's statements");
  t.notOk(texts.includes("savepoint psyche_prepare"), "no savepoint");
  t.equal(texts.filter((q) => q.includes("version()")).length, 1, "one question about the server, once per connection");
});

// Many connections to the embedded database at once, with transactions and parameterized
// queries (the extended protocol): nothing wedges, and every answer is its own question's.
import t from "tap";
import pg from "pg";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { endsGroup } from "../../src/db/protocol-groups.js";
import { seededDir } from "../helpers/db-template.js";

t.test("message groups close on Sync, Query, Terminate and startup", async (t) => {
  t.ok(endsGroup(Uint8Array.of(0x53, 0, 0, 0, 4)));
  t.ok(endsGroup(Uint8Array.of(0x51, 0, 0, 0, 5, 0)));
  t.ok(endsGroup(Uint8Array.of(0x58, 0, 0, 0, 4)));
  t.ok(endsGroup(Uint8Array.of(0, 0, 0, 8, 4, 210, 22, 47)));
  t.notOk(endsGroup(Uint8Array.of(0x50, 0, 0, 0, 4)), "Parse");
  t.notOk(endsGroup(Uint8Array.of(0x42, 0, 0, 0, 4)), "Bind");
  t.notOk(endsGroup(Uint8Array.of(0x45, 0, 0, 0, 4)), "Execute");
});

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: the server is wedged`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

t.test("transactions and parameterized queries from 8 connections at once neither wedge nor mix", async (t) => {
  const db = await startEmbeddedDatabase({ dataDir: await seededDir(t, "bare"), port: 0 });
  t.teardown(() => db.stop());
  const pool = new pg.Pool({ connectionString: db.connectionString, max: 8 });
  t.teardown(() => pool.end());
  await pool.query("create table probe (id serial primary key, who text not null, body text not null)");
  let wrong = 0;
  const work = Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; i < 40; i++) {
      const who = `${w}:${i}`;
      const body = "v".repeat(2000 + w * 300 + i);
      const client = await pool.connect();
      try {
        await client.query("begin");
        await client.query("select pg_advisory_xact_lock($1)", [42]);
        const before = await client.query("select count(*)::int as n from probe where who = $1", [who]);
        await client.query("insert into probe (who, body) values ($1, $2)", [who, body]);
        await client.query("commit");
        if (before.rows[0].n !== 0) wrong++;
      } finally {
        client.release();
      }
      const res = await pool.query("select who, length(body) as len from probe where who = $1", [who]);
      if (res.rows.length !== 1 || res.rows[0].len !== body.length) wrong++;
    }
  });
  await withDeadline(Promise.all(work), 60_000);
  t.equal(wrong, 0, "every answer was its own");
  t.equal((await pool.query("select count(*)::int as n from probe")).rows[0].n, 320);
});

t.test("a transaction still keeps its connection's statements together", async (t) => {
  const db = await startEmbeddedDatabase({ dataDir: await seededDir(t, "bare"), port: 0 });
  t.teardown(() => db.stop());
  const clients = await Promise.all(
    [0, 1].map(async () => {
      const c = new pg.Client({ connectionString: db.connectionString });
      await c.connect();
      return c;
    }),
  );
  t.teardown(() => Promise.all(clients.map((c) => c.end())));
  const [a, b] = clients;
  await a!.query("begin");
  await a!.query("create table if not exists tx_probe (n int)");
  await a!.query("insert into tx_probe values ($1)", [1]);
  const seen = b!.query("select count(*)::int as n from tx_probe");
  await a!.query("insert into tx_probe values ($1)", [2]);
  await a!.query("commit");
  t.equal((await seen).rows[0].n, 2, "the other connection waited for the commit");
});

// The migration runner on the real embedded Postgres, reached over the wire protocol.
import t from "tap";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { createPool } from "../../src/db/pool.js";
import { migrate, readMigrations, MigrationError } from "../../src/db/migrate.js";
import { seededDir } from "../helpers/db-template.js";

t.test("migrations apply once, concurrently, and record themselves", async (t) => {
  const db = await startEmbeddedDatabase({ dataDir: await seededDir(t, "bare"), port: 0 });
  t.teardown(() => db.stop());
  const a = createPool(db.connectionString, 2);
  const b = createPool(db.connectionString, 2);
  t.teardown(async () => {
    await a.end();
    await b.end();
  });
  const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
  const all = readMigrations().map((m) => m.name);
  t.same([...ra, ...rb].sort(), all, "each migration applied by exactly one of two concurrent runners");
  t.same(await migrate(a), [], "a second run applies nothing");
  const recorded = await a.query("select name from psyche_migrations order by name");
  t.same(
    recorded.rows.map((r) => r.name),
    all,
  );
  const ext = await a.query("select extname from pg_extension where extname = 'vector'");
  t.equal(ext.rowCount, 1, "pgvector is installed");
  const v = await a.query("select '[1,2,3]'::vector <-> '[1,2,4]'::vector as d");
  t.equal(Number(v.rows[0].d), 1, "vector distance works");
});

t.test("a failing migration rolls back whole and names itself", async (t) => {
  const dir = await seededDir(t, "bare");
  const db = await startEmbeddedDatabase({ dataDir: dir, port: 0 });
  t.teardown(() => db.stop());
  const pool = createPool(db.connectionString, 2);
  t.teardown(() => pool.end());
  const migrations = join(dir, "migrations");
  mkdirSync(migrations);
  writeFileSync(join(migrations, "000001_ok.sql"), "create table ok_table (id int);");
  writeFileSync(join(migrations, "000002_broken.sql"), "create table half_done (id int); select * from no_such_table;");
  await t.rejects(migrate(pool, undefined, readMigrations(migrations)), MigrationError);
  await t.rejects(migrate(pool, undefined, readMigrations(migrations)), /000002_broken\.sql/);
  const tables = await pool.query("select table_name from information_schema.tables where table_name in ('ok_table', 'half_done')");
  t.same(
    tables.rows.map((r) => r.table_name),
    ["ok_table"],
    "the broken migration left nothing behind",
  );
  const recorded = await pool.query("select name from psyche_migrations");
  t.same(
    recorded.rows.map((r) => r.name),
    ["000001_ok.sql"],
  );
});

t.test("two embedded servers on one data directory are refused", async (t) => {
  const dir = await seededDir(t, "bare");
  const db = await startEmbeddedDatabase({ dataDir: dir, port: 0 });
  t.teardown(() => db.stop());
  await t.rejects(startEmbeddedDatabase({ dataDir: dir, port: 0 }), /in use by process/);
});

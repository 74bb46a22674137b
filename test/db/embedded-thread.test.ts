// The embedded database on its own thread (db/embedded.ts, workers/threads/embedded-database.ts):
// its statements run beside this thread's JavaScript, what it stores outlives a stop, and a
// start that cannot listen says why and leaves nothing behind.
import t from "tap";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { seededDir } from "../helpers/db-template.js";

t.test("a long statement leaves this thread's event loop turning", async (t) => {
  const db = await startEmbeddedDatabase({ dataDir: await seededDir(t, "bare"), port: 0 });
  t.teardown(() => db.stop());
  const client = new pg.Client({ connectionString: db.ownConnectionString });
  await client.connect();
  t.teardown(() => client.end());
  // A second or so of WebAssembly on the database's thread. On this thread it would hold the
  // event loop until the statement ended, and the timers below would fire only then.
  const statement = client.query("select count(*)::int as n from generate_series(1, 3000000) as g where g % 7 = 3");
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const started = performance.now();
  const { rows } = await statement;
  const tookMs = performance.now() - started;
  clearInterval(timer);
  t.equal(rows[0].n, 428572, "the statement's answer");
  t.ok(tookMs > 200, `the statement took a while (${tookMs.toFixed(0)} ms): else this says nothing`);
  t.ok(ticks >= 3, `a 10 ms timer fired ${ticks} times while it ran`);
});

t.test("what is stored outlives a stop, and a second stop is the first's", async (t) => {
  const dataDir = await seededDir(t, "bare");
  const first = await startEmbeddedDatabase({ dataDir, port: 0 });
  const client = new pg.Client({ connectionString: first.connectionString });
  await client.connect();
  await client.query("create table kept (note text)");
  await client.query("insert into kept values ($1)", ["written before the stop"]);
  await client.end();
  await Promise.all([first.stop(), first.stop()]);
  const second = await startEmbeddedDatabase({ dataDir, port: 0 });
  t.teardown(() => second.stop());
  const again = new pg.Client({ connectionString: second.ownConnectionString });
  await again.connect();
  t.teardown(() => again.end());
  t.same((await again.query("select note from kept")).rows, [{ note: "written before the stop" }]);
});

t.test("a taken port is refused clearly, and the data directory is free again", async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as AddressInfo).port;
  const dataDir = await seededDir(t, "bare");
  // The socket's directory is made under TMPDIR (db/embedded.ts): one of this test's own.
  const temporary = mkdtempSync(join(tmpdir(), "embedded-thread-"));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = temporary;
  t.teardown(() => (saved === undefined ? delete process.env.TMPDIR : (process.env.TMPDIR = saved)));
  await t.rejects(startEmbeddedDatabase({ dataDir, port }), {
    name: "DatabaseInUseError",
    message: `port ${port} is in use, so the embedded database cannot listen there: pass --db-port (0 picks a free one) or stop the other server`,
  });
  t.same(readdirSync(temporary), [], "its socket's directory removed");
  t.notOk(existsSync(`${dataDir}/pgdata.pid`), "its lock released");
  const db = await startEmbeddedDatabase({ dataDir, port: 0 });
  t.teardown(() => db.stop());
  const client = new pg.Client({ connectionString: db.connectionString });
  await client.connect();
  t.teardown(() => client.end());
  t.same((await client.query("select 1 as one")).rows, [{ one: 1 }], "the same directory starts on a free port");
});

// The embedded database asks every connection for its password (db/password-gate.ts): a right
// one gets in, a wrong one, none, or garbage does not, and nothing behind the gate is reachable
// by another user. With psql when it is installed (CI's PostgreSQL step installs it).
import t from "tap";
import { spawn, spawnSync } from "node:child_process";
import { connect } from "node:net";
import { statSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { PASSWORD_FILE } from "../../src/db/embedded-password.js";
import { seededDir } from "../helpers/db-template.js";

const dataDir = await seededDir(t, "bare");
const db = await startEmbeddedDatabase({ dataDir, port: 0 });
t.teardown(() => db.stop());
const url = new URL(db.connectionString);
const password = decodeURIComponent(url.password);

/** Sends raw bytes to the gate and collects what comes back until it closes or `ms` pass. */
async function exchange(chunks: Buffer[], ms = 1500): Promise<{ reply: Buffer; closed: boolean }> {
  const socket = connect(db.port, "127.0.0.1");
  let reply = Buffer.alloc(0);
  let closed = false;
  socket.on("data", (d) => (reply = Buffer.concat([reply, d])));
  await new Promise<void>((resolve) => {
    socket.on("close", () => ((closed = true), resolve()));
    socket.on("connect", () => chunks.forEach((c) => socket.write(c)));
    setTimeout(resolve, ms);
  });
  socket.destroy();
  return { reply, closed };
}

function startup(user: string): Buffer {
  const body = Buffer.from(`user\0${user}\0database\0postgres\0\0`);
  const head = Buffer.alloc(8);
  head.writeInt32BE(body.length + 8, 0);
  head.writeInt32BE(196608, 4);
  return Buffer.concat([head, body]);
}

function passwordMessage(text: string): Buffer {
  const body = Buffer.from(`${text}\0`);
  const head = Buffer.alloc(5);
  head.write("p", 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

t.test("the password: made once, the owner's alone, in the connection string", async (t) => {
  t.match(password, /^[A-Za-z0-9_-]{32}$/);
  t.equal(statSync(join(dataDir, PASSWORD_FILE)).mode & 0o777, 0o600);
  const client = new pg.Client({ connectionString: db.connectionString });
  await client.connect();
  t.same((await client.query("select 1 as one")).rows, [{ one: 1 }]);
  await client.end();
});

t.test("a wrong password is refused with Postgres's own error", async (t) => {
  const url = new URL(db.connectionString);
  url.password = "not-the-password";
  const client = new pg.Client({ connectionString: url.toString() });
  await t.rejects(client.connect(), { code: "28P01", message: /password authentication failed for user "postgres"/ });
});

t.test("without a password nothing is answered but the request for one", async (t) => {
  const { reply } = await exchange([startup("postgres")]);
  t.equal(reply.length, 13, "one message: AuthenticationMD5Password");
  t.equal(reply.subarray(0, 1).toString(), "R");
  t.equal(reply.readInt32BE(5), 5);
  const empty = await exchange([startup("postgres"), passwordMessage("")]);
  t.match(empty.reply.toString("latin1"), /28P01/);
  t.ok(empty.closed, "and the connection is closed");
});

t.test("garbage, a huge first packet and an SSL request are handled; the database is untouched", async (t) => {
  const garbage = await exchange([Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n")]);
  t.ok(garbage.closed);
  const huge = Buffer.alloc(8);
  huge.writeInt32BE(1 << 30, 0);
  t.match((await exchange([huge])).reply.toString("latin1"), /08P01/);
  const ssl = Buffer.alloc(8);
  ssl.writeInt32BE(8, 0);
  ssl.writeInt32BE(80877103, 4);
  const answered = await exchange([ssl, startup("postgres")]);
  t.equal(answered.reply.subarray(0, 1).toString(), "N", "no TLS on loopback: the client goes on in plain text");
  t.equal(answered.reply.subarray(1, 2).toString(), "R", "then is asked for the password");
  const client = new pg.Client({ connectionString: db.connectionString });
  await client.connect();
  t.same((await client.query("select count(*)::int as n from pg_database where datname = 'postgres'")).rows, [{ n: 1 }]);
  await client.end();
});

const psql = spawnSync("psql", ["--version"]).status === 0;

/** psql as a child that does not block this process (the gate under test runs in it). */
function runPsql(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn("psql", args, { env: { ...process.env, PGCONNECT_TIMEOUT: "5", ...env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err })));
}
t.test("psql: refused without the password, let in with it", { skip: psql ? false : "psql is not installed" }, async (t) => {
  const plain = `postgresql://postgres@127.0.0.1:${db.port}/postgres`;
  const refused = await runPsql([plain, "-w", "-c", "select 1"], { PGPASSWORD: "" });
  t.not(refused.code, 0);
  t.match(refused.err, /password/);
  const wrong = await runPsql([plain, "-w", "-c", "select 1"], { PGPASSWORD: "guess" });
  t.match(wrong.err, /password authentication failed/);
  const admitted = await runPsql([db.connectionString, "-At", "-c", "select 40 + 2"], {});
  t.equal(admitted.code, 0, admitted.err);
  t.equal(admitted.out.trim(), "42");
});

t.test("the process's own way in: pglite-socket's Unix socket, in a directory only its owner may enter", async (t) => {
  const own = new URL(db.ownConnectionString);
  const dir = own.searchParams.get("host")!;
  t.match(dir, /^\//, "a socket's directory, not a network host");
  t.equal(statSync(dir).mode & 0o777, 0o700, "the owner's alone");
  t.ok(statSync(join(dir, `.s.PGSQL.${own.port}`)).isSocket(), "the socket pg's connection string names");
  t.notMatch(db.ownConnectionString, password, "no password in it: the directory is the gate");
  const client = new pg.Client({ connectionString: db.ownConnectionString });
  await client.connect();
  t.teardown(() => client.end());
  t.equal((await client.query("select 1 + 1 as two")).rows[0].two, 2, "and the same database answers");
});

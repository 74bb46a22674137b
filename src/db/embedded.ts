// The embedded Postgres: PGlite with pgvector, persisted in the data directory, served
// over the Postgres wire protocol so `pg`, pg-boss and psql take their ordinary code path.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { keepProtocolGroupsTogether } from "./protocol-groups.js";
import { acquirePidLock, type PidLock } from "./pid-lock.js";
import { UserError } from "../errors.js";
import { embeddedPassword, embeddedUrl } from "./embedded-password.js";
import { startPasswordGate, type PasswordGate } from "./password-gate.js";

export interface EmbeddedDatabaseOptions {
  /** The data directory; the database lives in `<dataDir>/pgdata`. */
  dataDir: string;
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** Client connections the socket server accepts at once. Default 64. */
  maxConnections?: number;
}

export interface EmbeddedDatabase {
  /** `postgresql://postgres:<password>@host:port/postgres`, usable by pg, pg-boss and psql. */
  connectionString: string;
  /**
   * For this process's own connections: pglite-socket's Unix socket itself, past the password
   * gate, whose directory only this user can enter. A statement's round trip then makes two
   * socket hops on the event loop, not four (0.28 ms against 0.47 for `select 1`, idle, on
   * 2 cores; the loop also runs the chats' HTTP and the model's callbacks).
   */
  ownConnectionString: string;
  port: number;
  /** The in-process PGlite, for LISTEN/NOTIFY inside this process. */
  pglite: PGlite;
  stop(): Promise<void>;
}

const SOCKET_PORT = 5432;

export class DatabaseInUseError extends UserError {
  override name = "DatabaseInUseError";
}

export async function startEmbeddedDatabase(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const dir = join(options.dataDir, "pgdata");
  mkdirSync(options.dataDir, { recursive: true });
  // Two processes on one PGlite directory would corrupt it, so a PID lock (db/pid-lock.ts) keeps the second out.
  let lock: PidLock;
  try {
    lock = acquirePidLock(join(options.dataDir, "pgdata.pid"));
  } catch (err) {
    const holder = (err as { holderPid?: number }).holderPid;
    throw new DatabaseInUseError(
      `the database in ${dir} is in use by process ${holder}: stop that psyche process, ` +
        `point this one at it with DATABASE_URL, or pass another --data-dir`,
      { cause: err },
    );
  }
  const pglite = new PGlite(dir, { extensions: { vector } });
  try {
    await pglite.waitReady;
    await pglite.exec("create extension if not exists vector");
  } catch (err) {
    lock.release();
    throw err;
  }
  const host = options.host ?? "127.0.0.1";
  const password = embeddedPassword(options.dataDir);
  // pglite-socket itself on a Unix socket in a private (0700) directory; the TCP port is the
  // password gate's (db/password-gate.ts). The directory is a short temporary one: a socket's
  // path has a length limit that a deep data directory would pass.
  const socketDir = mkdtempSync(join(tmpdir(), "psyche-db-"));
  // Named as pg names a server's socket (`<dir>/.s.PGSQL.<port>`), so a connection string with
  // the directory as its host reaches it; the port number only names the file.
  const socketPath = join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
  const server = new PGLiteSocketServer({ db: pglite, path: socketPath, maxConnections: options.maxConnections ?? 64 });
  keepProtocolGroupsTogether(server);
  let gate: PasswordGate;
  try {
    await server.start();
    gate = await startPasswordGate({ host, port: options.port, password, target: socketPath });
  } catch (err) {
    await server.stop().catch(() => undefined);
    await pglite.close();
    rmSync(socketDir, { recursive: true, force: true });
    lock.release();
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new DatabaseInUseError(
        `port ${options.port} is in use, so the embedded database cannot listen there: pass --db-port (0 picks a free one) or stop the other server`,
        { cause: err },
      );
    }
    throw err;
  }
  const port = gate.port;
  let stopped = false;
  return {
    connectionString: embeddedUrl(host, port, password),
    ownConnectionString: `postgresql://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(socketDir)}`,
    port,
    pglite,
    async stop() {
      if (stopped) return;
      stopped = true;
      await gate.close();
      await server.stop();
      await pglite.close();
      rmSync(socketDir, { recursive: true, force: true });
      lock.release();
    },
  };
}

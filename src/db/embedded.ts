// The embedded Postgres: PGlite with pgvector, persisted in the data directory, served
// over the Postgres wire protocol so `pg`, pg-boss and psql take their ordinary code path. It
// runs on a thread of its own (workers/threads/embedded-database.ts), with pglite-socket and
// the password gate: its statements then run beside the server's JavaScript, not inside it.
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { acquirePidLock, type PidLock } from "./pid-lock.js";
import { UserError } from "../errors.js";
import { embeddedPassword, embeddedUrl } from "./embedded-password.js";
import { type DatabaseThreadData, type DatabaseThreadReport, DatabaseThreadReportSchema } from "./embedded-thread.js";
import { threadExecArgv, threadFile } from "../thread-file.js";

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
   * socket hops, not four (0.28 ms against 0.47 for `select 1`, idle, on 2 cores, measured
   * with the database on the server's thread).
   */
  ownConnectionString: string;
  port: number;
  stop(): Promise<void>;
}

const SOCKET_PORT = 5432;

export class DatabaseInUseError extends UserError {
  override name = "DatabaseInUseError";
}

/** The thread's next report, checked. */
const nextReport = (worker: Worker) =>
  new Promise<DatabaseThreadReport>((resolve) => worker.once("message", (m: unknown) => resolve(DatabaseThreadReportSchema.parse(m))));

/** The database's thread, started: its first report (ready or failed), or its death before one. */
async function startThread(data: DatabaseThreadData): Promise<{ worker: Worker; first: DatabaseThreadReport }> {
  const worker = new Worker(threadFile("embedded-database"), { workerData: data, execArgv: threadExecArgv() });
  const first = await new Promise<DatabaseThreadReport>((resolve, reject) => {
    nextReport(worker).then(resolve, reject);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the embedded database's thread exited (code ${code}) before it was ready`)));
  });
  worker.removeAllListeners();
  return { worker, first };
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
  const host = options.host ?? "127.0.0.1";
  // pglite-socket itself on a Unix socket in a private (0700) directory; the TCP port is the
  // password gate's (db/password-gate.ts). The directory is a short temporary one: a socket's
  // path has a length limit that a deep data directory would pass.
  const socketDir = mkdtempSync(join(tmpdir(), "psyche-db-"));
  // Named as pg names a server's socket (`<dir>/.s.PGSQL.<port>`), so a connection string with
  // the directory as its host reaches it; the port number only names the file.
  const socketPath = join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
  const password = embeddedPassword(options.dataDir);
  const data = { dir, socketPath, maxConnections: options.maxConnections ?? 64, host, port: options.port, password };
  const undo = () => {
    rmSync(socketDir, { recursive: true, force: true });
    lock.release();
  };
  let started: Awaited<ReturnType<typeof startThread>>;
  try {
    started = await startThread(data);
  } catch (err) {
    undo();
    throw err;
  }
  const { worker, first } = started;
  if (first.kind !== "ready") {
    await once(worker, "exit").catch(() => undefined);
    undo();
    const message = first.kind === "failed" ? first.message : "it stopped before it was ready";
    if (first.kind === "failed" && first.code === "EADDRINUSE")
      throw new DatabaseInUseError(
        `port ${options.port} is in use, so the embedded database cannot listen there: pass --db-port (0 picks a free one) or stop the other server`,
      );
    throw new Error(`the embedded database could not start: ${message}`);
  }
  let stopping = false;
  // The thread ends only when asked: past that, the process has lost its database.
  const lost = (why: string) => {
    if (!stopping) throw new Error(`the embedded database's thread ${why}`);
  };
  worker.on("error", (err) => lost(`failed: ${err.message}`));
  worker.on("exit", (code) => lost(`exited (code ${code})`));
  const port = first.port;
  let stopped: Promise<void> | undefined;
  return {
    connectionString: embeddedUrl(host, port, password),
    ownConnectionString: `postgresql://postgres@localhost:${SOCKET_PORT}/postgres?host=${encodeURIComponent(socketDir)}`,
    port,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        const report = nextReport(worker);
        const exited = once(worker, "exit");
        worker.postMessage({ kind: "stop" });
        const [said] = await Promise.all([report, exited]);
        undo();
        if (said.kind === "stopped" && said.error) throw new Error(`stopping the embedded database: ${said.error}`);
      })();
      return stopped;
    },
  };
}

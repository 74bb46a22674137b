// The embedded database's own thread (db/embedded.ts): PGlite with pgvector, pglite-socket on a
// private Unix socket, and the password gate on the TCP port. PGlite runs each statement to its
// end in WebAssembly on the thread that holds it; on the server's main thread that was a quarter
// of the thread's time while four chats arrived at once, and every request's HTTP, every
// decode's dispatch and every token's relay waited behind it (docs/benchmarks.md, "The embedded
// database on its own thread"). Here only the bytes of the Postgres protocol cross to the server.
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { keepProtocolGroupsTogether } from "../../src/db/protocol-groups.js";
import { startPasswordGate, type PasswordGate } from "../../src/db/password-gate.js";
import { DatabaseThreadDataSchema, type DatabaseThreadReport, DatabaseThreadRequestSchema } from "../../src/db/embedded-thread.js";

const port = parentPort;
if (!port) throw new Error("workers/threads/embedded-database.ts runs as a thread of db/embedded.ts");
const data = DatabaseThreadDataSchema.parse(workerData);
const report = (r: DatabaseThreadReport) => port.postMessage(r);

interface Running {
  pglite: PGlite;
  server: PGLiteSocketServer;
  gate: PasswordGate;
}

async function start(): Promise<Running> {
  const pglite = new PGlite(data.dir, { extensions: { vector } });
  let server: PGLiteSocketServer | undefined;
  try {
    await pglite.waitReady;
    await pglite.exec("create extension if not exists vector");
    server = new PGLiteSocketServer({ db: pglite, path: data.socketPath, maxConnections: data.maxConnections });
    keepProtocolGroupsTogether(server);
    await server.start();
    const gate = await startPasswordGate({ host: data.host, port: data.port, password: data.password, target: data.socketPath });
    return { pglite, server, gate };
  } catch (err) {
    await server?.stop().catch(() => undefined);
    await pglite.close().catch(() => undefined);
    throw err;
  }
}

async function stop(running: Running): Promise<void> {
  // Each step runs even where one before it failed: PGlite's close writes its files.
  const errors: unknown[] = [];
  for (const step of [() => running.gate.close(), () => running.server.stop(), () => running.pglite.close()])
    await step().catch((err: unknown) => errors.push(err));
  if (errors.length) throw errors[0];
}

try {
  const running = await start();
  port.on("message", (message: unknown) => {
    DatabaseThreadRequestSchema.parse(message);
    void stop(running)
      .then(
        () => report({ kind: "stopped" }),
        (err: unknown) => report({ kind: "stopped", error: String((err as Error)?.message ?? err) }),
      )
      .finally(() => port.close());
  });
  report({ kind: "ready", port: running.gate.port });
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  report({ kind: "failed", message: String(e?.message ?? err), ...(typeof e?.code === "string" ? { code: e.code } : {}) });
  port.close();
}

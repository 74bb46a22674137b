// `psyche serve`: every role in one process; with no DATABASE_URL, the embedded Postgres too.
import type { Config } from "../config.js";
import { startEmbeddedDatabase } from "../db/embedded.js";
import { ensurePortFree } from "../http/server.js";
import type { InferenceEngine } from "../inference/engine.js";
import { createLlamaEngine } from "../inference/create-engine.js";
import type { InferenceWorker } from "../../workers/inference-worker.js";
import type { Logger } from "../log.js";
import { type DatabaseHandles, connect } from "./connect.js";
import { modelServices, webServices, startInferenceRole, startWebRole } from "./roles.js";
import type { WebServices } from "../web-services.js";
import { StopStack, stopStepLimitMs } from "./stack.js";
import { type MemoryServices, startMemoryServices } from "./memory-services.js";

export interface RunningPsyche {
  url: string;
  port: number;
  databaseUrl: string;
  db: DatabaseHandles;
  worker: InferenceWorker;
  mem: MemoryServices;
  /** The web process's services, which the HTTP API and MCP are built from (tests use it for in-process MCP). */
  web: WebServices;
  /** Stops every part; resolves to the names of those that failed or did not finish in time. */
  stop(): Promise<string[]>;
}

export async function serve(config: Config, log: Logger, opts: { engine?: InferenceEngine } = {}): Promise<RunningPsyche> {
  const stack = new StopStack(stopStepLimitMs(config));
  const s = { config, log, stack };
  const stop = () => stack.unwind((name, err) => log.error({ err }, `stopping ${name} failed`));
  try {
    // Before the database and the model: a taken port is said at once (http/server.ts).
    await ensurePortFree(config.host, config.port);
    let connectionString = config.databaseUrl;
    let own = connectionString;
    if (!connectionString) {
      const embedded = await startEmbeddedDatabase({ dataDir: config.dataDir, port: config.dbPort });
      stack.push("embedded database", () => embedded.stop());
      connectionString = embedded.connectionString;
      own = embedded.ownConnectionString;
    }
    const db = await connect(s, own!, { migrate: true, supervise: true, embeddedInProcess: !config.databaseUrl });
    const engine = opts.engine ?? (await createLlamaEngine(config, log));
    const mem = await startMemoryServices(s, db);
    const worker = await startInferenceRole(s, db, engine, mem);
    const web = { ...webServices(s, db, mem), ...modelServices(engine, worker) };
    const server = await startWebRole(s, web);
    return { url: server.url, port: server.port, databaseUrl: connectionString, db, worker, mem, web, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

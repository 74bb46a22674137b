// The roles as separate processes (Procfile): `psyche db`, `psyche migrate`, `psyche web`,
// `psyche inference`. They find each other only through Postgres.
import type { Config } from "../config.js";
import { createPool } from "../db/pool.js";
import { migrate } from "../db/migrate.js";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "../db/embedded.js";
import { startQueue } from "../jobs/queue.js";
import { waitForDatabase } from "../db/wait.js";
import type { Logger } from "../log.js";
import type { RunningServer } from "../http/server.js";
import { databaseUrl } from "./database-url.js";
import { connect, webServices, startWebRole } from "./roles.js";
import { startMemoryServices } from "./memory-services.js";
import { loadTokenizer } from "../inference/load-model.js";
import { StopStack, stopStepLimitMs } from "./stack.js";

export interface Running {
  stop(): Promise<unknown>;
}

/** How long a separately started role waits for the database to come up. */
export const DATABASE_WAIT_MS = 30_000;

const stopper = (stack: StopStack, log: Logger) => () => stack.unwind((name, err) => log.error({ err }, `stopping ${name} failed`));

export async function runDatabase(config: Config, log: Logger): Promise<Running & { database: EmbeddedDatabase }> {
  const database = await startEmbeddedDatabase({ dataDir: config.dataDir, port: config.dbPort });
  // The port, not the address: the address holds the password, and logs carry no secret.
  log.info({ port: database.port }, "embedded database listening");
  return { database, stop: () => database.stop() };
}

/** Applies our migrations and installs pg-boss's schema and queue, then returns. */
export async function runMigrate(config: Config, log: Logger): Promise<string[]> {
  const url = databaseUrl(config);
  await waitForDatabase(url, DATABASE_WAIT_MS);
  const pool = createPool(url, 2);
  try {
    const applied = await migrate(pool, log);
    const boss = await startQueue({ connectionString: url, log, max: 2 });
    await boss.stop({ graceful: false, wait: true });
    return applied;
  } finally {
    await pool.end();
  }
}

export async function runWeb(config: Config, log: Logger): Promise<Running & { server: RunningServer }> {
  const stack = new StopStack(stopStepLimitMs(config));
  const stop = stopper(stack, log);
  try {
    await waitForDatabase(databaseUrl(config), DATABASE_WAIT_MS);
    const db = await connect({ config, log, stack }, databaseUrl(config), { migrate: false, supervise: false, embeddedInProcess: false });
    const mem = await startMemoryServices({ config, log, stack }, db);
    const shared = { config, log, stack };
    // The model's vocabulary alone, for POST /v1/messages/count_tokens: no weights in a web
    // process, and loaded at the first count, so that nothing at start waits on it.
    let tokenizer: Promise<((text: string) => number) | undefined> | undefined;
    const countTokens = async (text: string) => {
      tokenizer ??= loadTokenizer(config.model, config.dataDir, log).catch((err: unknown) => {
        log.warn({ err }, "the model's tokenizer could not be loaded: count_tokens answers 503");
        return undefined;
      });
      const count = await tokenizer;
      return count ? count(text) : undefined;
    };
    // The up-front context check (conversation/context-fit.ts) counts with this vocabulary
    // against the context the live workers recorded.
    const server = await startWebRole(shared, { ...webServices(shared, db, mem), countTokens });
    return { server, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export { stopper };

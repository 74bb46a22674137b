// `psyche migrate`: the Procfile's release step, safe to run twice at once.
import type { Config } from "../config.js";
import { createPool } from "../db/pool.js";
import { migrate } from "../db/migrate.js";
import { waitForDatabase } from "../db/wait.js";
import { startQueue } from "../jobs/queue.js";
import type { Logger } from "../log.js";
import { databaseUrl } from "./database-url.js";
import { DATABASE_WAIT_MS } from "./stack.js";

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

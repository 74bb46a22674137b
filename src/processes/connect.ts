// A process's database handles: the pool, pg-boss and the signal bus, stopped in reverse.
import type PgBoss from "pg-boss";
import { createPool, openAll, type Pool } from "../db/pool.js";
import { migrate } from "../db/migrate.js";
import { createBus, type SignalBus } from "../jobs/bus.js";
import { startQueue } from "../jobs/queue.js";
import type { Shared } from "./stack.js";

export interface DatabaseHandles {
  connectionString: string;
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
}

/** Pool, pg-boss and the signal bus on `connectionString`. Migrates first when asked. */
export async function connect(
  s: Pick<Shared, "log" | "stack">,
  connectionString: string,
  opts: { migrate: boolean; supervise: boolean; embeddedInProcess: boolean },
): Promise<DatabaseHandles> {
  const pool = createPool(connectionString);
  s.stack.push("database pool", () => pool.end());
  if (opts.migrate) await migrate(pool, s.log);
  await openAll(pool);
  const boss = await startQueue({ connectionString, log: s.log, supervise: opts.supervise });
  s.stack.push("job queue", () => boss.stop({ graceful: true, wait: true, timeout: 5000 }));
  const bus = await createBus({ pool, connectionString, embeddedInProcess: opts.embeddedInProcess, log: s.log });
  s.stack.push("signal bus", () => bus.close());
  return { connectionString, pool, boss, bus };
}

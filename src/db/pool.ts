import pg from "pg";
import { PreparingClient } from "./prepared.js";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool, "query">;

// bigint columns (counts, sequence numbers) as numbers: all of ours fit.
pg.types.setTypeParser(20, (v) => Number(v));

/** A pool whose parameterized queries are prepared once per connection (see prepared.ts). */
export function createPool(connectionString: string, max = 10): Pool {
  const pool = new pg.Pool({ connectionString, max, min: max, idleTimeoutMillis: 30_000, Client: PreparingClient });
  // An idle client that loses its connection emits here; without a listener it would crash.
  pool.on("error", () => undefined);
  // So does a checked-out one (pool.connect(): a transaction), and pg-pool listens only while it
  // is idle: a database killed mid-transaction crashed the process. Its queries still reject
  // with the error, which is how callers learn of it (db/errors.ts, isConnectionError).
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

/** Opens all of `pool`'s connections at once, so the first burst of requests waits for none. */
export async function openAll(pool: Pool): Promise<void> {
  const clients = await Promise.all(Array.from({ length: pool.options.max }, () => pool.connect()));
  for (const c of clients) c.release();
}

/**
 * Runs `fn` on one of the pool's connections, taken before it: a statement is then written to
 * the server as it is called (in the next microtask), where the pool's own query waits for a
 * tick behind whatever microtasks this thread has queued (conversation/start-turn.ts).
 */
export async function onConnection<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

/** Runs `fn` in a transaction. Keep it short: the embedded server serializes transactions. */
export async function inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return onConnection(pool, async (client) => {
    try {
      await client.query("begin");
      const result = await fn(client);
      await client.query("commit");
      return result;
    } catch (err) {
      await client.query("rollback").catch(() => undefined);
      throw err;
    }
  });
}

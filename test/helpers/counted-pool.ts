// A pool that records what a caller runs on it: each query's text, and "connect" for each
// connection taken (a transaction), to check how many round trips a step costs.
import type { Pool } from "../../src/db/pool.js";

export function countedPool(pool: Pool): { pool: Pool; statements: string[] } {
  const statements: string[] = [];
  const counted = {
    query: (...args: Parameters<Pool["query"]>) => {
      statements.push(String(args[0]));
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    },
    connect: () => {
      statements.push("connect");
      return pool.connect();
    },
  } as unknown as Pool;
  return { pool: counted, statements };
}

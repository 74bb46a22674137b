// A pool that records what a caller runs on it: each query's text, and "connect" for each
// connection taken (a transaction, or a statement sent on a connection of its own), then each
// query on that connection, to check how many round trips a step costs.
import type { Pool } from "../../src/db/pool.js";

export function countedPool(pool: Pool): { pool: Pool; statements: string[] } {
  const statements: string[] = [];
  const counted = {
    query: (...args: Parameters<Pool["query"]>) => {
      statements.push(String(args[0]));
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    },
    connect: async () => {
      statements.push("connect");
      const client = await pool.connect();
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      const counted = (...args: unknown[]) => {
        statements.push(String(args[0]));
        return query(...args);
      };
      return new Proxy(client, {
        get(target, prop) {
          if (prop === "query") return counted;
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  } as unknown as Pool;
  return { pool: counted, statements };
}

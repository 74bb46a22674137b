import pg from "pg";
import { isConnectionError } from "./errors.js";
import { ping } from "./sql/server.js";
import { UserError, type UserErrorOptions } from "../errors.js";

/**
 * Waits until Postgres accepts connections, for processes that a Procfile runner starts at
 * the same moment as the database. Fails with a message that says what to start.
 */
export async function waitForDatabase(connectionString: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString });
    try {
      await client.connect();
      await ping(client);
      return;
    } catch (err) {
      if (!isConnectionError(err) || Date.now() > deadline) {
        const where = connectionString.replace(/\/\/[^@]*@/, "//");
        throw new DatabaseUnreachableError(
          `cannot reach the database at ${where}: ${(err as Error).message}. Start it (psyche db, or your Postgres) or set DATABASE_URL`,
          { cause: err },
        );
      }
      await new Promise((r) => setTimeout(r, 250));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

export class DatabaseUnreachableError extends UserError {
  override name = "DatabaseUnreachableError";
  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { status: 503, ...opts });
  }
}

// Forward-only SQL migrations from migrations/*.sql: each in its own transaction, recorded
// in psyche_migrations. The transaction-scoped advisory lock makes concurrent runners safe on
// a real Postgres; on the embedded one, transactions are serialized anyway and session locks
// would not exclude (every connection shares one backend there; db/sql/locks.ts), so only the
// xact lock is used.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log.js";
import { packageRoot } from "../paths.js";
import { PgErrorCode, pgErrorCode } from "./errors.js";
import { inTransaction, type Pool } from "./pool.js";
import { UserError } from "../errors.js";
import { AdvisoryLock, lockForTransaction } from "./sql/locks.js";
import { ensureMigrationsTable, migrationApplied, recordMigration } from "./sql/migrations.js";

export const MIGRATIONS_DIR = join(packageRoot(), "migrations");

export interface Migration {
  name: string;
  sql: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{6}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), "utf8") }));
}

export class MigrationError extends UserError {
  override name = "MigrationError";
}

/** Applies pending migrations; returns the names applied by this call. */
export async function migrate(pool: Pool, log?: Logger, migrations = readMigrations()): Promise<string[]> {
  const applied: string[] = [];
  for (const m of migrations) {
    const didApply = await inTransaction(pool, async (client) => {
      await lockForTransaction(client, AdvisoryLock.migration);
      await ensureMigrationsTable(client);
      if (await migrationApplied(client, m.name)) return false;
      try {
        await client.query(m.sql);
      } catch (err) {
        if (pgErrorCode(err) === PgErrorCode.undefinedFile || /extension "vector"/.test(String(err))) {
          throw new MigrationError(
            `${m.name}: this Postgres has no pgvector extension. Install it (e.g. the postgresql-NN-pgvector package) or unset DATABASE_URL to use the embedded database`,
            { cause: err },
          );
        }
        throw new MigrationError(`${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      await recordMigration(client, m.name);
      return true;
    });
    if (didApply) {
      applied.push(m.name);
      log?.info({ migration: m.name }, "applied migration");
    }
  }
  return applied;
}

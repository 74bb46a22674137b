// Forward-only SQL migrations from migrations/*.sql: each in its own transaction, recorded
// in psyche_migrations. The transaction-scoped advisory lock makes concurrent runners safe on
// a real Postgres; on the embedded one, transactions are serialized anyway and session locks
// would not exclude (shared/notes/postgres-here.md), so only the xact lock is used.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log.js";
import { packageRoot } from "../paths.js";
import { PgErrorCode, pgErrorCode } from "./errors.js";
import { inTransaction, type Pool } from "./pool.js";

const MIGRATION_LOCK = 7_415_001;

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

export class MigrationError extends Error {
  override name = "MigrationError";
}

/** Applies pending migrations; returns the names applied by this call. */
export async function migrate(pool: Pool, log?: Logger, migrations = readMigrations()): Promise<string[]> {
  const applied: string[] = [];
  for (const m of migrations) {
    const didApply = await inTransaction(pool, async (client) => {
      await client.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      await client.query(
        "create table if not exists psyche_migrations (name text primary key, applied_at timestamptz not null default now())",
      );
      const done = await client.query("select 1 from psyche_migrations where name = $1", [m.name]);
      if (done.rowCount) return false;
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
      await client.query("insert into psyche_migrations (name) values ($1)", [m.name]);
      return true;
    });
    if (didApply) {
      applied.push(m.name);
      log?.info({ migration: m.name }, "applied migration");
    }
  }
  return applied;
}

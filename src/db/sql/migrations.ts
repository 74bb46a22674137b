// The record of applied migrations (db/migrate.ts applies them).
import type { Queryable } from "../pool.js";

export async function ensureMigrationsTable(db: Queryable): Promise<void> {
  await db.query("create table if not exists psyche_migrations (name text primary key, applied_at timestamptz not null default now())");
}

export async function migrationApplied(db: Queryable, name: string): Promise<boolean> {
  const res = await db.query("select 1 from psyche_migrations where name = $1", [name]);
  return (res.rowCount ?? 0) > 0;
}

export async function recordMigration(db: Queryable, name: string): Promise<void> {
  await db.query("insert into psyche_migrations (name) values ($1)", [name]);
}

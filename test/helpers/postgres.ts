// The end-to-end suite runs on the embedded database, and, when PSYCHE_TEST_POSTGRES names a
// real PostgreSQL with pgvector (scripts/test-postgres.sh starts one), on that too: each test
// directory gets a database of its own there, so a restart in the same directory finds its data.
import { createHash } from "node:crypto";
import pg from "pg";

/** The real PostgreSQL the suite runs against, or undefined for the embedded database. */
export const TEST_POSTGRES = process.env.PSYCHE_TEST_POSTGRES || undefined;

/** Why a test that needs the embedded database is skipped on a real PostgreSQL. */
export const EMBEDDED_ONLY = TEST_POSTGRES ? "tests the embedded database; PSYCHE_TEST_POSTGRES is set" : false;

/** A database on TEST_POSTGRES for `dataDir`, created on first use; undefined without one. */
export async function testDatabaseUrl(dataDir: string): Promise<string | undefined> {
  if (!TEST_POSTGRES) return undefined;
  const name = `psyche_test_${createHash("sha256").update(dataDir).digest("hex").slice(0, 16)}`;
  const client = new pg.Client({ connectionString: TEST_POSTGRES });
  await client.connect();
  try {
    const exists = await client.query("select 1 from pg_database where datname = $1", [name]);
    if (!exists.rowCount) await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(TEST_POSTGRES);
  url.pathname = `/${name}`;
  return url.toString();
}

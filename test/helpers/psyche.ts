// Starts a real Psyche (embedded Postgres, pg-boss, tiny GGUF model, HTTP on port 0) for a
// test file, in a tap test directory that is kept when the test fails. Nothing dreams or
// consolidates by itself unless a test asks (dreamDelaySeconds, consolidation). With
// PSYCHE_TEST_POSTGRES, a real PostgreSQL instead of the embedded one (helpers/postgres.ts).
import type { Test } from "tap";
import type { Config } from "../../src/config.js";
import { testConfig } from "./test-config.js";
import { createLogger } from "../../src/log.js";
import { serve, type RunningPsyche } from "../../src/processes/serve.js";
import type { InferenceEngine } from "../../src/inference/engine.js";
import { testDatabaseUrl } from "./postgres.js";
import { serverDir } from "./testdir.js";
import { seedDatabase } from "./db-template.js";

export { testConfig };

export async function startPsyche(
  t: Test,
  overrides: Record<string, unknown> = {},
  opts: { engine?: InferenceEngine } = {},
): Promise<RunningPsyche & { config: Config }> {
  const dir = serverDir(t);
  // A test that restarts on one data directory (overrides.dataDir) finds its database again.
  const databaseUrl = await testDatabaseUrl(typeof overrides.dataDir === "string" ? overrides.dataDir : dir);
  const config = testConfig(dir, { ...(databaseUrl ? { databaseUrl } : {}), ...overrides });
  if (!config.databaseUrl) await seedDatabase(config.dataDir);
  const psyche = await serve(config, createLogger(config.logLevel), opts);
  t.teardown(async () => {
    // A part that failed or hung while stopping is named here (the test's log is silent), so
    // a stuck shutdown shows which part instead of a file timeout.
    const troubled = await psyche.stop();
    if (troubled.length) console.error(`# stopping Psyche: ${troubled.join(", ")} failed or did not finish in time`);
  });
  return { ...psyche, config };
}

/** Row counts of every table a chat request writes to (pg-boss's cron ticks on the maintenance queue are not a request's). */
export async function writtenRows(psyche: RunningPsyche): Promise<Record<string, number>> {
  const res = await psyche.db.pool.query<{ t: string; n: number }>(
    `select 'conversations' as t, count(*)::int as n from conversations
     union all select 'messages', count(*)::int from messages
     union all select 'turns', count(*)::int from turns
     union all select 'turn_events', count(*)::int from turn_events
     union all select 'responses', count(*)::int from responses
     union all select 'jobs', count(*)::int from pgboss.job where name in ('psyche-inference', 'psyche-memory')`,
  );
  return Object.fromEntries(res.rows.map((r) => [r.t, r.n]));
}

// The database of a test that needs no server: the embedded Postgres (PGlite with pgvector,
// copied from the run's template, helpers/db-template.ts), migrated, with the pool, pg-boss and
// the signal bus built as every process builds them (processes/connect.ts), all in this process.
// With PSYCHE_TEST_POSTGRES, a database of its own on that server instead. Stopped when the test ends.
import type { Test } from "tap";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { connect, type DatabaseHandles } from "../../src/processes/connect.js";
import { StopStack } from "../../src/processes/stack.js";
import { createLogger } from "../../src/log.js";
import { openTurn, type OpenTurnDeps } from "../../src/conversation/open-turn.js";
import { claimTurn } from "../../src/db/sql/turns.js";
import { randomUUID } from "node:crypto";
import { type TurnRequest, turnRequest } from "../../src/conversation/turn-request.js";
import { seedDatabase } from "./db-template.js";
import { testDatabaseUrl } from "./postgres.js";
import { serverDir } from "./testdir.js";

export interface TestDatabase extends DatabaseHandles {
  dataDir: string;
}

export async function testDatabase(t: Test): Promise<TestDatabase> {
  const dataDir = serverDir(t, "db");
  const log = createLogger(process.env.PSYCHE_TEST_LOG ?? "silent");
  const stack = new StopStack(20_000);
  t.teardown(async () => {
    const troubled = await stack.unwind();
    if (troubled.length) console.error(`# stopping the test database: ${troubled.join(", ")} failed or did not finish in time`);
  });
  let url = await testDatabaseUrl(dataDir);
  if (!url) {
    await seedDatabase(dataDir);
    const embedded = await startEmbeddedDatabase({ dataDir, port: 0 });
    stack.push("embedded database", () => embedded.stop());
    url = embedded.ownConnectionString;
  }
  const handles = await connect({ log, stack }, url, {
    migrate: true,
    supervise: false,
    embeddedInProcess: !process.env.PSYCHE_TEST_POSTGRES,
  });
  return { ...handles, dataDir };
}

/** What conversation/open-turn.ts needs, over a test database: no model, so no context check. */
export function turnDeps(db: Pick<TestDatabase, "pool" | "boss" | "bus">, overrides: Partial<OpenTurnDeps> = {}): OpenTurnDeps {
  return { pool: db.pool, boss: db.boss, bus: db.bus, pollMs: 100, modelId: "psyche", maxTokens: 1024, strictParams: false, ...overrides };
}

/** A user's message as a turn request of a conversation of its own. */
export const userTurn = (content: string, parts: Partial<TurnRequest> = {}): TurnRequest =>
  turnRequest({ model: "psyche", messages: [{ role: "user", content }], conversation: { kind: "own" }, scope: "default", ...parts });

/** A stored turn of its own conversation, claimed by `workerId` and running, as a worker holds one. */
export async function runningTurn(
  db: Pick<TestDatabase, "pool" | "boss" | "bus">,
  workerId: string,
  content = "a running turn",
): Promise<string> {
  const opened = await openTurn(turnDeps(db), userTurn(`${content} ${randomUUID()}`));
  opened.follower.close();
  const jobId: string = (await db.pool.query("select job_id from turns where id = $1", [opened.turnId])).rows[0].job_id;
  if (!(await claimTurn(db.pool, opened.turnId, jobId, workerId))) throw new Error(`turn ${opened.turnId} could not be claimed`);
  return opened.turnId;
}

// A whole Psyche in this process without a port or a model file: the test database
// (helpers/database.ts), the memory services, the inference role with a scripted engine and the
// HTTP app, each built by the product's own wiring (processes/roles.ts). Routes are reached with
// Hono's app.request(), so a test of a route or of a turn answers in a second. The end-to-end
// files (test/e2e/) keep their real servers, models and clients.
import type { Test } from "tap";
import type { Hono } from "hono";
import { createApp } from "../../src/http/app.js";
import { mcpRoutes } from "../../src/mcp/http-route.js";
import { modelServices, startInferenceRole, webServices } from "../../src/processes/roles.js";
import { startMemoryServices, type MemoryServices } from "../../src/processes/memory-services.js";
import { StopStack } from "../../src/processes/stack.js";
import { createLogger } from "../../src/log.js";
import type { Config } from "../../src/config.js";
import type { InferenceEngine } from "../../src/inference/engine.js";
import type { WebServices } from "../../src/web-services.js";
import type { InferenceWorker } from "../../workers/inference-worker.js";
import { testDatabase, type TestDatabase } from "./database.js";
import { testConfig } from "./test-config.js";
import { ScriptedEngine } from "./scripted-engine.js";

export interface InProcessPsyche {
  app: Hono;
  config: Config;
  db: TestDatabase;
  mem: MemoryServices;
  web: WebServices;
  worker: InferenceWorker;
  engine: InferenceEngine;
  /** A request to the app: `path` and fetch's init, a JSON body given as an object. */
  request(path: string, init?: Omit<RequestInit, "body"> & { body?: unknown }): Promise<Response>;
}

/**
 * Starts it for `t`, stopped when `t` ends. Without an engine, a scripted one that answers "ok".
 * As in `psyche serve`, the worker takes the turns it has room for as they are stored (jobs/hand-off.ts) unless `handOff` is false.
 */
export async function inProcessPsyche(
  t: Test,
  overrides: Record<string, unknown> = {},
  opts: { engine?: InferenceEngine; handOff?: boolean } = {},
): Promise<InProcessPsyche> {
  const db = await testDatabase(t);
  // A turn's memory is formed at once, not after a quiet second: these tests ask for it, and
  // the quiet itself is jobs/yield-to-chats.ts's test and test/e2e/memory-yields.test.ts's.
  const config = testConfig(db.dataDir, { memoryQuietMs: 0, ...overrides });
  const log = createLogger(config.logLevel);
  const stack = new StopStack(20_000);
  t.teardown(async () => {
    const troubled = await stack.unwind();
    if (troubled.length) console.error(`# stopping the in-process Psyche: ${troubled.join(", ")} failed or did not finish in time`);
  });
  const s = { config, log, stack };
  const engine: InferenceEngine = opts.engine ?? new ScriptedEngine(() => ({ text: "ok" }));
  const mem = await startMemoryServices(s, db);
  const worker = await startInferenceRole(s, db, engine, mem);
  // handOff false: the web role signals every turn through the queue, as one in a process of its own does.
  const web: WebServices = {
    ...webServices(s, db, mem),
    ...modelServices(engine, worker),
    ...(opts.handOff === false ? { turnTaker: undefined } : {}),
  };
  const app = createApp(web);
  app.route("/", mcpRoutes(web));
  const request = async (path: string, init: Omit<RequestInit, "body"> & { body?: unknown } = {}): Promise<Response> => {
    const { body, ...rest } = init;
    const json = body !== undefined && typeof body !== "string";
    return app.request(path, {
      ...rest,
      ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : (body as string) }),
      headers: { ...(json ? { "content-type": "application/json" } : {}), ...(rest.headers as Record<string, string> | undefined) },
      ...(body !== undefined && !rest.method ? { method: "POST" } : {}),
    });
  };
  return { app, config, db, mem, web, worker, engine, request };
}

/** The memory side alone (the test database, the embedding and scoring threads, the store, the mood): no worker, no app. */
export async function testMemory(
  t: Test,
  overrides: Record<string, unknown> = {},
): Promise<Pick<InProcessPsyche, "config" | "db" | "mem">> {
  const db = await testDatabase(t);
  const config = testConfig(db.dataDir, overrides);
  const stack = new StopStack(20_000);
  t.teardown(() => stack.unwind());
  const mem = await startMemoryServices({ config, log: createLogger(config.logLevel), stack }, db);
  return { config, db, mem };
}

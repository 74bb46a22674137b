// Building blocks of every process: each role starts what it needs and registers how to stop it.
import { serverKeys } from "../config.js";
import { downloadModel } from "../inference/load-model.js";
import { recordPresenceTtl } from "../db/sql/activity.js";
import { workersContextSize } from "../db/sql/workers.js";
import { AgentSessions } from "../agents/sessions.js";
import { createApp } from "../http/app.js";
import type { WebServices } from "../web-services.js";
import { listen, type RunningServer } from "../http/server.js";
import { mcpRoutes } from "../mcp/http-route.js";
import type { InferenceEngine } from "../inference/engine.js";
import type { TurnTaker } from "../jobs/hand-off.js";
import { InferenceWorker } from "../../workers/inference-worker.js";
import type { Shared } from "./stack.js";
import type { DatabaseHandles } from "./connect.js";
import type { MemoryServices } from "./memory-services.js";
import { MemoryRecall } from "../memory/recall.js";
import { MemoryWorker } from "../../workers/memory-worker.js";
import { MEMORY_TOOL_SPECS, MemoryTools } from "../memory/memory-tools.js";
import { DreamScheduler } from "../dreams/scheduler.js";
import { defaultDreamSettings } from "../dreams/settings.js";

/** What the web role (HTTP API and MCP) is built from, once per process. */
export function webServices(s: Shared, db: DatabaseHandles, mem: MemoryServices): WebServices {
  const { config } = s;
  return {
    ...mem,
    pool: db.pool,
    boss: db.boss,
    bus: db.bus,
    log: s.log,
    modelId: config.modelId,
    maxTokens: config.maxTokens,
    bodyLimit: config.bodyLimit,
    pollMs: config.pollMs,
    apiKeys: serverKeys(config),
    mcpAllowedOrigins: config.mcpAllowedOrigins,
    workerStaleMs: config.heartbeatMs * 5,
    dreamDefaults: defaultDreamSettings(config),
    agents: new AgentSessions({ pool: db.pool, memory: mem.memory }),
    hooks: { checkInEvery: config.hookCheckInEvery, maxTokens: config.hookMaxTokens },
    presenceTtlSeconds: config.presenceTtlSeconds,
    strictParams: config.strictParams,
    persona: config.persona,
    serverTools: config.memoryTools ? MEMORY_TOOL_SPECS : undefined,
    // What the live workers recorded (a web process without the model); psyche serve asks its engine.
    contextSize: () => workersContextSize(db.pool, (config.heartbeatMs * 5) / 1000),
    pullModel: (spec, onProgress, signal) =>
      downloadModel(spec, config.dataDir, { interactive: false, endpoint: config.hfEndpoint, log: s.log, onProgress, signal }),
  };
}

/**
 * What the web role asks of the model, where the process has it: its tokenizer, context,
 * thinking channel and description, and its worker, which takes the turns it has room for as
 * they are stored (jobs/hand-off.ts).
 */
export function modelServices(
  engine: InferenceEngine,
  worker: TurnTaker,
): Pick<WebServices, "countTokens" | "contextSize" | "thinks" | "describeModel" | "turnTaker"> {
  const size = engine.contextSize;
  return {
    turnTaker: worker,
    countTokens: async (text: string) => engine.countTokens(text),
    ...(size ? { contextSize: async () => size } : {}),
    thinks: async () => engine.thinks,
    describeModel: async () => engine.describe?.(),
  };
}

/** The web role: the HTTP API with the MCP endpoint beside it, over one set of services. */
export async function startWebRole(s: Shared, services: WebServices): Promise<RunningServer> {
  const closing = new AbortController();
  await recordPresenceTtl(services.pool, services.presenceTtlSeconds);
  const app = createApp({ ...services, closing: closing.signal });
  app.route("/", mcpRoutes(services));
  const server = await listen(app, s.config.host, s.config.port);
  s.stack.push("http server", () => {
    // Endless streams (GET /v1/events) end first, so they do not hold the server for its grace period.
    closing.abort();
    return server.close(s.config.shutdownGraceSeconds * 1000);
  });
  return server;
}

export async function startInferenceRole(
  s: Shared,
  db: DatabaseHandles,
  engine: InferenceEngine,
  mem: MemoryServices,
): Promise<InferenceWorker> {
  s.stack.push("model", () => engine.dispose());
  const recall = new MemoryRecall({
    ...mem,
    log: s.log,
    budgetTokens: s.config.recallPromptTokens,
    floor: { share: s.config.recallMinShare, coverage: s.config.recallMinCoverage },
    countTokens: (text) => engine.countTokens(text),
  });
  const worker = new InferenceWorker({
    recall,
    memory: mem.memory,
    mood: mem.mood,
    dreamMaxMs: s.config.dreamMaxSeconds * 1000,
    serverTools: s.config.memoryTools ? new MemoryTools(mem.memory) : undefined,
    serverToolIterations: s.config.toolIterations,
    pool: db.pool,
    boss: db.boss,
    bus: db.bus,
    engine,
    log: s.log,
    persona: s.config.persona,
    pollMs: s.config.pollMs,
    flushMs: s.config.streamFlushMs,
    heartbeatMs: s.config.heartbeatMs,
  });
  // The memory worker names this worker on its consolidations: if the process dies during one,
  // this worker's stale heartbeat lets a live worker close the entry (src/jobs/reclaim.ts).
  const memoryWorker = new MemoryWorker({
    ...db,
    ...mem,
    log: s.log,
    pollMs: s.config.pollMs,
    purgeAfterSeconds: s.config.memoryPurgeAfterSeconds,
    memoryDeferSeconds: s.config.memoryDeferSeconds,
    memoryQuietMs: s.config.memoryQuietMs,
    dreamDefaults: defaultDreamSettings(s.config),
    journalKeepDays: s.config.journalKeepDays,
    workerId: worker.id,
  });
  await memoryWorker.start();
  s.stack.push("memory worker", () => memoryWorker.stop());
  await worker.start();
  const { config } = s;
  const scheduler = new DreamScheduler({
    ...db,
    log: s.log,
    defaults: defaultDreamSettings(config),
    everyMs: Math.max(250, Math.min(2000, config.pollMs * 5)),
    presenceTtlSeconds: config.presenceTtlSeconds,
    sinceChatMs: () => worker.sinceChatMs,
  });
  scheduler.start();
  s.stack.push("dream scheduler", () => scheduler.stop());
  s.stack.push("inference worker", () => worker.stop(s.config.shutdownGraceSeconds * 1000));
  return worker;
}

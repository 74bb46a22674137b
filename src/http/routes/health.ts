import { Hono } from "hono";
import { lastActivity } from "../../db/sql/activity.js";
import { presentClients } from "../../db/sql/clients.js";
import { queueCounts } from "../../db/sql/pgboss-jobs.js";
import { ping } from "../../db/sql/server.js";
import { liveWorkers } from "../../db/sql/workers.js";
import { INFERENCE_QUEUE } from "../../jobs/queue.js";
import type { WebServices } from "../../web-services.js";
import { PSYCHE_VERSION } from "../../version.js";
import { presentedKey } from "../../api-keys.js";

/** GET /health: the database, the queue, the inference worker. 503 when the database is down. */
export function healthRoutes(deps: WebServices): Hono {
  const app = new Hono();
  app.get("/health", async (c) => {
    const started = performance.now();
    try {
      await ping(deps.pool);
    } catch (err) {
      return c.json({ status: "down", database: { ok: false, error: (err as Error).message } }, 503);
    }
    const databaseMs = performance.now() - started;
    const queue = await queueCounts(deps.pool, INFERENCE_QUEUE);
    const [workers, lastRequestAt, clients] = await Promise.all([
      liveWorkers(deps.pool),
      lastActivity(deps.pool),
      presentClients(deps.pool, deps.presenceTtlSeconds),
    ]);
    const alive = workers.filter((w) => w.seconds_since_heartbeat * 1000 < deps.workerStaleMs);
    // Behind keys, a caller without one learns only how the server is (not its clients or queue).
    if (deps.apiKeys.length && !presentedKey(deps.apiKeys, c.req.header("authorization"), c.req.header("x-api-key")))
      return c.json({ status: alive.length > 0 ? "ok" : "degraded" });
    return c.json({
      status: alive.length > 0 ? "ok" : "degraded",
      version: PSYCHE_VERSION,
      model: deps.modelId,
      database: { ok: true, latency_ms: Math.round(databaseMs * 10) / 10 },
      queue: { name: INFERENCE_QUEUE, ...queue },
      // Presence: the dream delay and the wake lock count from it.
      last_request_at: lastRequestAt,
      // Clients that heartbeat POST /v1/presence (Hermes): no dream starts while one is here.
      clients: { present: clients.length, data: clients },
      worker: {
        alive: alive.length > 0,
        workers: alive.map((w) => ({ id: w.id, model: w.model, seconds_since_heartbeat: Math.round(w.seconds_since_heartbeat * 10) / 10 })),
      },
    });
  });
  return app;
}

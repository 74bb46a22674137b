import { Hono } from "hono";
import { liveWorkers } from "../../db/sql/workers.js";
import { INFERENCE_QUEUE } from "../../jobs/queue.js";
import type { HttpDeps } from "../deps.js";

/** GET /health: the database, the queue, the inference worker. 503 when the database is down. */
export function healthRoutes(deps: HttpDeps): Hono {
  const app = new Hono();
  app.get("/health", async (c) => {
    const started = performance.now();
    try {
      await deps.pool.query("select 1");
    } catch (err) {
      return c.json({ status: "down", database: { ok: false, error: (err as Error).message } }, 503);
    }
    const databaseMs = performance.now() - started;
    const counts = await deps.pool.query<{ state: string; n: number }>(
      "select state::text, count(*)::int as n from pgboss.job where name = $1 and state in ('created', 'retry', 'active') group by state",
      [INFERENCE_QUEUE],
    );
    const n = (s: string) => counts.rows.find((r) => r.state === s)?.n ?? 0;
    const workers = await liveWorkers(deps.pool);
    const alive = workers.filter((w) => w.seconds_since_heartbeat * 1000 < deps.workerStaleMs);
    return c.json({
      status: alive.length > 0 ? "ok" : "degraded",
      model: deps.modelId,
      database: { ok: true, latency_ms: Math.round(databaseMs * 10) / 10 },
      queue: { name: INFERENCE_QUEUE, queued: n("created") + n("retry"), active: n("active") },
      worker: {
        alive: alive.length > 0,
        workers: alive.map((w) => ({ id: w.id, model: w.model, seconds_since_heartbeat: Math.round(w.seconds_since_heartbeat * 10) / 10 })),
      },
    });
  });
  return app;
}

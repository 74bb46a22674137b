// GET /v1/events: the inner life as Server-Sent Events (docs/operations.md). The events are rows
// that triggers write with each change (migrations/000013_events.sql), so any web process
// serves the same stream, and a client that reconnects with Last-Event-ID misses none. A key
// bound to scopes (or a request naming one) gets its scopes' events and the server's own; of
// another scope's reverie it learns only the dream state, which is the server's (one engine).
import { Hono } from "hono";
import { stream } from "hono/streaming";
import { z } from "zod";
import { type EventRow, eventIdBefore, eventsAfter, lastEventId } from "../../db/sql/events.js";
import type { WebServices } from "../../web-services.js";
import { fromZodError } from "../../errors.js";
import { sseHeaders } from "../sse.js";
import { visibleScopes } from "../request-scope.js";

export const EVENT_TYPES = [
  "dream.state",
  "reverie.finished",
  "memory.stored",
  "memory.folded",
  "mood.changed",
  "client.came",
  "client.left",
] as const;

const QuerySchema = z.object({
  /** Resume after this event id (the Last-Event-ID header says the same). */
  after: z
    .string()
    .regex(/^\d{1,18}$/, "after is an event id (a non-negative integer)")
    .optional(),
  /** Without `after`: start with the last `backlog` events (default 0: only what happens next). */
  backlog: z.coerce.number().int().min(0).max(1000).default(0),
  /** Only these types, comma-separated. */
  types: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(EVENT_TYPES, { error: `types are ${EVENT_TYPES.join(", ")}` })).min(1))
    .optional(),
});

/** What of an event a reader who sees only `visible` may have (undefined: nothing). */
export function eventFor(e: EventRow, visible: readonly string[] | null): Record<string, unknown> | undefined {
  if (visible === null) return e.data;
  // The mood is the server's; what moved it (a turn, a reverie) is in some scope (src/http/routes/mood.ts).
  if (e.type === "mood.changed") return { ...e.data, source_id: undefined };
  if (e.scope === null || visible.includes(e.scope)) return e.data;
  if (e.type === "dream.state") return { state: e.data["state"], kind: e.data["kind"] };
  return undefined;
}

const POLL_MS = 250;
/**
 * Ids are handed out as events are written but become visible as their transactions commit, so
 * a later id can be seen first. The stream stays in id order (Last-Event-ID means "all before
 * it"): it waits this long for a missing id, then takes it for a rolled-back write. Every
 * transaction that writes an event is a short one (migrations/000013_events.sql).
 */
const GAP_WAIT_MS = 3000;
const KEEPALIVE_MS = 15_000;

export function eventRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.get("/v1/events", async (c) => {
    const q = QuerySchema.safeParse({ ...c.req.query(), after: c.req.query("after") ?? c.req.header("last-event-id") });
    if (!q.success) throw fromZodError(q.error);
    const { backlog, types } = q.data;
    const visible = visibleScopes(c);
    let after = q.data.after ?? (backlog > 0 ? await eventIdBefore(deps.pool, backlog) : await lastEventId(deps.pool));
    sseHeaders(c);
    return stream(c, async (s) => {
      const stop = new AbortController();
      s.onAbort(() => stop.abort());
      const onClosing = () => stop.abort();
      deps.closing?.addEventListener("abort", onClosing, { once: true });
      if (deps.closing?.aborted) stop.abort();
      // The retry hint, and a first line so that the client knows the stream is open.
      await s.write(`retry: 2000\n: events after ${after}\n\n`);
      let quietSince = Date.now();
      let gapSince: number | null = null;
      while (!stop.signal.aborted) {
        const rows = await eventsAfter(deps.pool, after, 200);
        let sent = 0;
        let consumed = 0;
        for (const e of rows) {
          // A gap in recent events: one whose transaction has not committed yet, or one rolled
          // back. Wait for it a while, in order, rather than skip it for good. (An old gap is
          // a purge's or an old rollback's.)
          if (BigInt(e.id) !== BigInt(after) + 1n && Date.now() - e.at.getTime() < 60_000) {
            gapSince ??= Date.now();
            if (Date.now() - gapSince < GAP_WAIT_MS) break;
          }
          gapSince = null;
          after = e.id;
          consumed++;
          if (types && !types.includes(e.type as (typeof EVENT_TYPES)[number])) continue;
          const data = eventFor(e, visible);
          if (data === undefined) continue;
          await s.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify({ id: e.id, at: e.at, type: e.type, data })}\n\n`);
          sent++;
        }
        if (sent) quietSince = Date.now();
        else if (Date.now() - quietSince > KEEPALIVE_MS) {
          await s.write(": keepalive\n\n");
          quietSince = Date.now();
        }
        if (consumed < 200) await new Promise((r) => setTimeout(r, POLL_MS));
      }
      deps.closing?.removeEventListener("abort", onClosing);
    });
  });

  return app;
}

// Presence: any authenticated request (a chat, MCP, the memory API, a hook) means someone is
// there, for the dream delay and the wake lock (db/sql/dreams.ts counts quiet from it). Reads of
// the dream life (GET /dream/*) and the event stream (GET /v1/events) do not: a page that
// watches Psyche sleep must not keep it up.
import type { Context, Next } from "hono";
import { touchActivity } from "../db/sql/activity.js";
import type { Pool } from "../db/pool.js";
import type { Logger } from "../log.js";

/** The least time between two presence writes from this process: the statement's own (db/sql/activity.ts). */
const TOUCH_EVERY_MS = 1000;

export function presence(deps: { pool: Pool; log: Logger }) {
  let touchedAt = -Infinity;
  return async (c: Context, next: Next) => {
    await next();
    if (c.req.method === "GET" && (c.req.path.startsWith("/dream/") || c.req.path === "/v1/events")) return;
    if (c.res.status === 401 || c.res.status === 403) return;
    // The statement writes at most once a second; asking more often only costs a round trip
    // each (docs/decisions.md, "Presence written at most once a second").
    const now = performance.now();
    if (now - touchedAt < TOUCH_EVERY_MS) return;
    touchedAt = now;
    // After the answer, off its path: a lost write only makes Psyche dream a little sooner.
    touchActivity(deps.pool).catch((err: unknown) => deps.log.debug({ err }, "presence not recorded"));
  };
}

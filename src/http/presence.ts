// Presence: any authenticated request (a chat, MCP, the memory API, a hook) means someone is
// there, for the dream delay and the wake lock (db/sql/dreams.ts counts quiet from it). Reads of
// the dream life (GET /dream/*) and the event stream (GET /v1/events) do not: a page that
// watches Psyche sleep must not keep it up. Neither does a request without a valid key.
import type { Context, Next } from "hono";
import { presentedKey, type ApiKey } from "../api-keys.js";
import { touchActivity } from "../db/sql/activity.js";
import type { Pool } from "../db/pool.js";
import type { Logger } from "../log.js";

/** The least time between two presence writes from this process: the statement's own (db/sql/activity.ts). */
const TOUCH_EVERY_MS = 1000;
/**
 * How long after a request's arrival its presence is written, if it is still being handled. The
 * embedded database runs one statement at a time: written at once, it went before the request's
 * own first statement (a chat's turn stored, 1-4 ms later here); a request is read and begun
 * within a few milliseconds, and one answered sooner is written as it ends.
 */
const ARRIVAL_WRITE_MS = 25;

export function presence(deps: { pool: Pool; log: Logger; apiKeys: readonly ApiKey[] }) {
  let touchedAt = -Infinity;
  const touch = () => {
    // The statement writes at most once a second; asking more often only costs a round trip
    // each (docs/decisions.md, "Presence written at most once a second").
    const now = performance.now();
    if (now - touchedAt < TOUCH_EVERY_MS) return;
    touchedAt = now;
    // Off the request's path: a lost write only makes Psyche dream a little sooner.
    touchActivity(deps.pool).catch((err: unknown) => deps.log.debug({ err }, "presence not recorded"));
  };
  // While an authenticated request is being handled, it is presence shortly after its arrival
  // and each second: one longer than the dream delay (a first embedding on a slow machine) would
  // otherwise leave a quiet spell while it runs, as the throttle may have skipped its arrival.
  // A streamed answer is handled once its stream starts; chats count through their turns
  // (db/sql/dreams.ts).
  let handling = 0;
  let ticking: NodeJS.Timeout | undefined;
  return async (c: Context, next: Next) => {
    if (c.req.method === "GET" && (c.req.path.startsWith("/dream/") || c.req.path === "/v1/events")) return next();
    const keyed = !deps.apiKeys.length || presentedKey(deps.apiKeys, c.req.header("authorization"), c.req.header("x-api-key"));
    if (!keyed) return next();
    const arrival = setTimeout(touch, ARRIVAL_WRITE_MS).unref();
    handling++;
    ticking ??= setInterval(touch, TOUCH_EVERY_MS).unref();
    try {
      await next();
    } finally {
      clearTimeout(arrival);
      if (--handling === 0) {
        clearInterval(ticking);
        ticking = undefined;
      }
    }
    if (c.res.status !== 401 && c.res.status !== 403) touch();
  };
}

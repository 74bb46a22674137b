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
 * How long after a request's arrival its presence is written. The embedded database runs one
 * statement at a time: written at once, it went before the request's own first statement (a
 * chat's turn stored, 1-4 ms later here); written as a streamed chat's stream began, just before
 * its first event's. One answered, or its stream begun, sooner is written then all the same.
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
    let arrived = false;
    const arrival = setTimeout(() => {
      arrived = true;
      touch();
    }, ARRIVAL_WRITE_MS).unref();
    handling++;
    ticking ??= setInterval(touch, TOUCH_EVERY_MS).unref();
    try {
      await next();
    } catch (err) {
      clearTimeout(arrival);
      throw err;
    } finally {
      if (--handling === 0) {
        clearInterval(ticking);
        ticking = undefined;
      }
    }
    if (c.res.status === 401 || c.res.status === 403) clearTimeout(arrival);
    // Handled past the arrival write: presence now. Sooner, the arrival write still to come is it.
    else if (arrived) touch();
  };
}

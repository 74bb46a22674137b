// Presence (migrations/000009_presence.sql): the last request from a client.
import type { Queryable } from "../pool.js";

/** Records a request; at most one write a second, however many requests come. */
export async function touchActivity(db: Queryable): Promise<void> {
  await db.query(
    "update activity set last_request_at = now() where last_request_at is null or last_request_at < now() - interval '1 second'",
  );
}

export async function lastActivity(db: Queryable): Promise<Date | null> {
  const res = await db.query<{ at: Date | null }>("select last_request_at as at from activity");
  return res.rows[0]?.at ?? null;
}

/** The presence TTL this server runs with, for the triggers that tell the dream state (migrations/000016_presence_state.sql). */
export async function recordPresenceTtl(db: Queryable, seconds: number): Promise<void> {
  await db.query("update activity set presence_ttl_seconds = $1 where presence_ttl_seconds is distinct from $1", [seconds]);
}

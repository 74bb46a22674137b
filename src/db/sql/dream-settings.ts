// The one dream_settings row (migrations): the overrides made through PATCH /dream/config, and
// do-not-disturb. Do-not-disturb is read here alone: it holds while dnd_until is in the future.
import type { Queryable } from "../pool.js";

export interface StoredDreamSettings {
  overrides: Record<string, unknown>;
  /** Do-not-disturb's end while it holds; null when it does not. */
  dndUntil: Date | null;
  dndReason: string | null;
  /** The last wake request (POST /dream/wake): a reverie started before it stops. */
  wakeRequestedAt: Date | null;
}

export async function storedDreamSettings(db: Queryable): Promise<StoredDreamSettings> {
  const res = await db.query<{
    overrides: Record<string, unknown>;
    dnd_until: Date | null;
    dnd_reason: string | null;
    wake_requested_at: Date | null;
  }>("select overrides, case when dnd_until > now() then dnd_until end as dnd_until, dnd_reason, wake_requested_at from dream_settings");
  const row = res.rows[0];
  return {
    overrides: row?.overrides ?? {},
    dndUntil: row?.dnd_until ?? null,
    dndReason: row?.dnd_until ? (row.dnd_reason ?? null) : null,
    wakeRequestedAt: row?.wake_requested_at ?? null,
  };
}

/** Do-not-disturb's end, if it holds now. */
export async function doNotDisturbUntil(db: Queryable): Promise<Date | null> {
  return (await storedDreamSettings(db)).dndUntil;
}

/** Sets the keys of `set` and removes those in `reset` (back to their defaults), in one statement. */
export async function patchDreamOverrides(db: Queryable, set: Record<string, unknown>, reset: readonly string[]): Promise<void> {
  await db.query("update dream_settings set overrides = (overrides - $2::text[]) || $1::jsonb, updated_at = now()", [
    JSON.stringify(set),
    reset,
  ]);
}

/** Records a wake request (and ends do-not-disturb): reveries that started before it stop. */
export async function requestWake(db: Queryable): Promise<void> {
  await db.query(
    "update dream_settings set wake_requested_at = clock_timestamp(), dnd_until = null, dnd_reason = null, updated_at = now()",
  );
}

export async function setDoNotDisturb(db: Queryable, until: Date | null, reason: string | null): Promise<void> {
  await db.query("update dream_settings set dnd_until = $1, dnd_reason = $2, updated_at = now()", [until, reason]);
}

// Statements about the database server itself rather than a table: is it there, and its
// LISTEN/NOTIFY signals (jobs/bus.ts carries them between processes).
import type { Queryable } from "../pool.js";

/** A round trip that touches no table: the server answers. */
export async function ping(db: Queryable): Promise<void> {
  await db.query("select 1");
}

/** Channel names are Psyche's own constants (jobs/bus.ts), never user text: LISTEN takes no parameters. */
const CHANNEL = /^[a-z_]+$/;

export async function listen(db: Queryable, channel: string): Promise<void> {
  if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
  await db.query(`listen ${channel}`);
}

export async function notify(db: Queryable, channel: string, payload: string): Promise<void> {
  await db.query("select pg_notify($1, $2)", [channel, payload]);
}

/** Several notifications in one statement, delivered in the order given. */
export async function notifyAll(db: Queryable, signals: readonly { channel: string; payload: string }[]): Promise<void> {
  await db.query("select pg_notify(c, p) from unnest($1::text[], $2::text[]) with ordinality as s(c, p, n) order by n", [
    signals.map((s) => s.channel),
    signals.map((s) => s.payload),
  ]);
}

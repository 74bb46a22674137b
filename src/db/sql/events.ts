// The inner life's event log (migrations/000013_events.sql): written by triggers, read in order.
import type { Queryable } from "../pool.js";

export interface EventRow {
  id: string;
  at: Date;
  type: string;
  data: Record<string, unknown>;
  /** Whose it is (a memory's or a reverie's scope); null: the server's own (migrations/000024_event_scopes.sql). */
  scope: string | null;
}

/** Events after `afterId`, oldest first (ids are bigints, kept as strings). */
export async function eventsAfter(db: Queryable, afterId: string, limit: number): Promise<EventRow[]> {
  // Ordered by the column, not the text alias ("10" sorts before "7").
  const res = await db.query<EventRow>(
    "select e.id::text as id, e.at, e.type, e.data, e.scope from events e where e.id > $1::bigint order by e.id limit $2",
    [afterId, limit],
  );
  return res.rows;
}

/** The newest event's id ('0' when there is none): where a live-only reader starts. */
export async function lastEventId(db: Queryable): Promise<string> {
  const res = await db.query<{ id: string | null }>("select max(id)::text as id from events");
  return res.rows[0]?.id ?? "0";
}

/** The id of the `n`th newest event's predecessor: where a reader that wants a backlog of n starts. */
export async function eventIdBefore(db: Queryable, n: number): Promise<string> {
  const res = await db.query<{ id: string | null }>(
    "select (min(id) - 1)::text as id from (select id from events order by id desc limit $1) e",
    [n],
  );
  return res.rows[0]?.id ?? "0";
}

/** Drops events older than `seconds`; returns how many. */
export async function purgeEvents(db: Queryable, seconds: number): Promise<number> {
  const res = await db.query("delete from events where at < now() - make_interval(secs => $1)", [seconds]);
  return res.rowCount ?? 0;
}

/**
 * Records that the clients left: no request for a minute (dreams/status.ts counts that long
 * as awake), once per quiet spell. Leaving is silence, so the dream scheduler looks for it on
 * each tick, under its lock (dreams/scheduler.ts), and no two processes record it twice.
 */
export async function noteDeparture(db: Queryable): Promise<boolean> {
  const res = await db.query(
    `insert into events (type, data)
     select 'client.left', jsonb_build_object('last_request_at', a.last_request_at)
     from activity a
     where a.last_request_at < now() - interval '60 seconds' and a.last_request_at > now() - interval '6 days'
       and not exists (select 1 from events e where e.type = 'client.left' and e.at >= a.last_request_at)`,
  );
  return res.rowCount === 1;
}

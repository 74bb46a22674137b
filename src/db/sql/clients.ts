// Clients present (migrations/000015_clients.sql): heartbeats, leaving, who is here.
import type { Queryable } from "../pool.js";

export interface ClientRow {
  id: string;
  name: string;
  connected_at: Date;
  last_seen_at: Date;
}

/**
 * A heartbeat: the client is here now. `arrived` is true when it was not present before (new,
 * left, or silent past the TTL): an arrival wakes a dream (dreams/status.ts).
 */
export async function heartbeat(db: Queryable, c: { id: string; name: string; ttlSeconds: number }): Promise<{ arrived: boolean }> {
  const res = await db.query<{ arrived: boolean }>(
    `with before as (
       select (left_at is null and last_seen_at > now() - make_interval(secs => $3)) as here from clients where id = $1
     )
     insert into clients as c (id, name) values ($1, $2)
     on conflict (id) do update set name = excluded.name, last_seen_at = now(), left_at = null,
       connected_at = case when c.left_at is null and c.last_seen_at > now() - make_interval(secs => $3) then c.connected_at else now() end
     returning not coalesce((select here from before), false) as arrived`,
    [c.id, c.name, c.ttlSeconds],
  );
  return { arrived: res.rows[0]!.arrived };
}

/** The client said goodbye; false when it was not known. */
export async function leave(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query("update clients set left_at = now() where id = $1 and left_at is null", [id]);
  return (res.rowCount ?? 0) > 0;
}

/** Clients present now: not left, heard from within the TTL. Newest first. */
export async function presentClients(db: Queryable, ttlSeconds: number): Promise<ClientRow[]> {
  const res = await db.query<ClientRow>(
    `select c.id::text as id, c.name, c.connected_at, c.last_seen_at from clients c
     where c.left_at is null and c.last_seen_at > now() - make_interval(secs => $1) order by c.last_seen_at desc limit 100`,
    [ttlSeconds],
  );
  return res.rows;
}

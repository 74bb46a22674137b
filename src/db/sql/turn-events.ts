import type { Queryable } from "../pool.js";

/** "delta": the reply's text; "reasoning": the model's thought (a reasoning family's); then "done" or "error" closes. */
export type TurnEventKind = "delta" | "reasoning" | "done" | "error";

export interface TurnEvent {
  seq: number;
  kind: TurnEventKind;
  content: string;
}

export async function eventsAfter(db: Queryable, turnId: string, afterSeq: number): Promise<TurnEvent[]> {
  const res = await db.query<TurnEvent>("select seq, kind, content from turn_events where turn_id = $1 and seq > $2 order by seq", [
    turnId,
    afterSeq,
  ]);
  return res.rows;
}

/**
 * Appends an event if `workerId` still holds the running turn. Returns whether it was
 * written and whether cancellation was requested (checked in the same round trip).
 */
export async function appendEvent(
  db: Queryable,
  turnId: string,
  workerId: string,
  seq: number,
  kind: TurnEventKind,
  content: string,
  tokens = 0,
): Promise<{ written: boolean; cancelRequested: boolean }> {
  const res = await db.query<{ written: boolean; cancel: boolean | null }>(
    `with owner as (
       select id, cancel_requested_at from turns where id = $1 and worker_id = $2 and status = 'running'),
     ins as (
       insert into turn_events (turn_id, seq, kind, content, tokens) select id, $3, $4, $5, $6 from owner returning 1)
     select exists (select 1 from ins) as written, (select cancel_requested_at is not null from owner) as cancel`,
    [turnId, workerId, seq, kind, content, tokens],
  );
  const row = res.rows[0];
  return { written: row?.written ?? false, cancelRequested: row?.cancel ?? false };
}

/** Appends a closing event regardless of the worker (used when a turn fails or is reclaimed). */
export async function appendClosingEvent(db: Queryable, turnId: string, kind: "done" | "error", content: string): Promise<TurnEvent> {
  const res = await db.query<{ seq: number }>(
    `insert into turn_events (turn_id, seq, kind, content)
     select $1, coalesce(max(seq), 0) + 1, $2, $3 from turn_events where turn_id = $1 returning seq`,
    [turnId, kind, content],
  );
  return { seq: res.rows[0]!.seq, kind, content };
}

/** When the turn's first text or thought was written: the end of reading its prompt, near enough (Ollama's timings). */
export async function firstEventAt(db: Queryable, turnId: string): Promise<Date | null> {
  const res = await db.query<{ at: Date | null }>(
    "select min(created_at) as at from turn_events where turn_id = $1 and kind in ('delta', 'reasoning')",
    [turnId],
  );
  return res.rows[0]?.at ?? null;
}

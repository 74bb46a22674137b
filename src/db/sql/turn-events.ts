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
): Promise<AppendResult> {
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

/** One event for appendEvents: its turn, the worker that must still hold it, and the event. */
export interface EventAppend {
  turnId: string;
  workerId: string;
  seq: number;
  kind: TurnEventKind;
  content: string;
  tokens: number;
}

export interface AppendResult {
  written: boolean;
  cancelRequested: boolean;
}

/**
 * appendEvent for several turns' events in one statement, each checked on its own: a row whose
 * worker no longer holds its turn, or whose seq is taken, is not written (and reads as such);
 * the others are. The results are in the rows' order. A row that makes the statement fail
 * (not a uuid) fails them all: conversation/event-batch.ts then writes each alone.
 */
export async function appendEvents(db: Queryable, rows: EventAppend[]): Promise<AppendResult[]> {
  const res = await db.query<{ written: boolean; cancel: boolean | null }>(
    `with req as (
       select * from unnest($1::uuid[], $2::uuid[], $3::int[], $4::text[], $5::text[], $6::int[])
         with ordinality as r(turn_id, worker_id, seq, kind, content, tokens, i)),
     owner as (
       select r.i, r.turn_id, r.seq, r.kind, r.content, r.tokens, t.cancel_requested_at
       from req r join turns t on t.id = r.turn_id and t.worker_id = r.worker_id and t.status = 'running'),
     ins as (
       insert into turn_events (turn_id, seq, kind, content, tokens)
       select turn_id, seq, kind, content, tokens from owner order by i
       on conflict (turn_id, seq) do nothing returning turn_id, seq)
     select exists (select 1 from ins where ins.turn_id = r.turn_id and ins.seq = r.seq) as written,
            (select o.cancel_requested_at is not null from owner o where o.i = r.i) as cancel
     from req r order by r.i`,
    [
      rows.map((r) => r.turnId),
      rows.map((r) => r.workerId),
      rows.map((r) => r.seq),
      rows.map((r) => r.kind),
      rows.map((r) => r.content),
      rows.map((r) => r.tokens),
    ],
  );
  return res.rows.map((row) => ({ written: row.written, cancelRequested: row.cancel ?? false }));
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

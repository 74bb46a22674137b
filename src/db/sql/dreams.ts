import type { Queryable } from "../pool.js";

export interface DreamRow {
  id: string;
  kind: "dream" | "reflect" | "idle";
  status: "dreaming" | "done" | "interrupted" | "failed";
  job_id: string | null;
  focus: string | null;
  started_at: Date;
  ended_at: Date | null;
  seed_memory_ids: string[];
  content: string;
  significance: number | null;
  valence: number | null;
  arousal: number | null;
  was_interrupted: boolean;
  wake_latency_ms: number | null;
  tokens: number;
  model: string;
  error: string | null;
}

export async function startDream(db: Queryable, d: { id: string; jobId: string; focus: string | null; seedMemoryIds: string[]; model: string }): Promise<void> {
  await db.query(`insert into dream_journal (id, job_id, focus, seed_memory_ids, model) values ($1, $2, $3, $4::uuid[], $5)`, [d.id, d.jobId, d.focus, d.seedMemoryIds, d.model]);
}

export async function endDream(
  db: Queryable,
  id: string,
  r: { status: "done" | "interrupted" | "failed"; content: string; tokens: number; significance: number | null; valence: number | null; arousal: number | null; wakeLatencyMs: number | null; error?: string | null },
): Promise<void> {
  await db.query(
    `update dream_journal set status = $2, content = $3, tokens = $4, significance = $5, valence = $6, arousal = $7,
       was_interrupted = ($2 = 'interrupted'), wake_latency_ms = $8, error = $9, ended_at = now() where id = $1`,
    [id, r.status, r.content, r.tokens, r.significance, r.valence, r.arousal, r.wakeLatencyMs, r.error ?? null],
  );
}

export async function scoreDream(db: Queryable, id: string, s: { importance: number; valence: number; arousal: number }): Promise<void> {
  await db.query(`update dream_journal set significance = $2, valence = $3, arousal = $4 where id = $1`, [id, s.importance, s.valence, s.arousal]);
}

export async function recentDreams(db: Queryable, limit: number): Promise<DreamRow[]> {
  const res = await db.query<DreamRow>(`select * from dream_journal order by started_at desc limit $1`, [limit]);
  return res.rows;
}

/** Dream seeds: the most recent, the most important, and a few at random. */
export async function dreamSeeds(db: Queryable, each: number): Promise<{ id: string; content: string }[]> {
  const res = await db.query<{ id: string; content: string }>(
    `(select id, content from memories where deleted_at is null and kind <> 'dream' order by created_at desc limit $1)
     union
     (select id, content from memories where deleted_at is null and kind <> 'dream' order by importance desc limit $1)
     union
     (select id, content from memories where deleted_at is null order by random() limit $1)`,
    [each],
  );
  return res.rows;
}

export interface DreamState {
  state: "sleeping" | "dreaming" | "waking" | "awake";
  since: Date | null;
  focus: string | null;
  dream_id: string | null;
}

/**
 * Seed 003's states, from the tables (any web process can tell): dreaming while a journal
 * entry is open, waking when a chat has been queued since it began, awake within
 * `awakeSeconds` of the last turn, otherwise sleeping.
 */
export async function dreamState(db: Queryable, awakeSeconds: number): Promise<DreamState> {
  const res = await db.query<{ dream_id: string | null; dream_started: Date | null; focus: string | null; last_turn: Date | null; chat_waiting: boolean }>(
    `select d.id as dream_id, d.started_at as dream_started, d.focus,
       (select max(coalesce(finished_at, created_at)) from turns) as last_turn,
       exists (select 1 from turns t where t.status in ('queued', 'running') and d.id is not null and t.created_at >= d.started_at) as chat_waiting
     from (select 1) one left join lateral (select * from dream_journal where status = 'dreaming' order by started_at desc limit 1) d on true`,
  );
  const r = res.rows[0]!;
  if (r.dream_id) return { state: r.chat_waiting ? "waking" : "dreaming", since: r.dream_started, focus: r.focus, dream_id: r.dream_id };
  const awake = r.last_turn !== null && Date.now() - r.last_turn.getTime() < awakeSeconds * 1000;
  return { state: awake ? "awake" : "sleeping", since: r.last_turn, focus: null, dream_id: null };
}

// The mood's history: one row of emotion_log per change (the table keeps the name users' SQL
// already reads; the code says mood throughout).
import type { Queryable } from "../pool.js";

export type MoodCause = "turn" | "dream" | "api" | "decay";

export interface MoodRow {
  id: number;
  at: Date;
  valence: number;
  arousal: number;
  cause: MoodCause;
  source_id: string | null;
  stimulus_valence: number | null;
  stimulus_arousal: number | null;
}

export async function latestMood(db: Queryable): Promise<MoodRow | undefined> {
  const res = await db.query<MoodRow>(`select * from emotion_log order by at desc, id desc limit 1`);
  return res.rows[0];
}

export async function moodHistory(db: Queryable, limit: number): Promise<MoodRow[]> {
  const res = await db.query<MoodRow>(`select * from emotion_log order by at desc, id desc limit $1`, [limit]);
  return res.rows;
}

export interface NewMood {
  valence: number;
  arousal: number;
  cause: MoodCause;
  sourceId: string | null;
  stimulus: { valence: number; arousal: number } | null;
}

export async function insertMood(db: Queryable, e: NewMood): Promise<MoodRow> {
  const res = await db.query<MoodRow>(
    `insert into emotion_log (valence, arousal, cause, source_id, stimulus_valence, stimulus_arousal)
     values ($1, $2, $3, $4, $5, $6) returning *`,
    [e.valence, e.arousal, e.cause, e.sourceId, e.stimulus?.valence ?? null, e.stimulus?.arousal ?? null],
  );
  return res.rows[0]!;
}

/** Whether an event already moved the mood (memory jobs are retried). */
export async function moodFromSource(db: Queryable, cause: MoodCause, sourceId: string): Promise<boolean> {
  const res = await db.query(`select 1 from emotion_log where cause = $1 and source_id = $2 limit 1`, [cause, sourceId]);
  return (res.rowCount ?? 0) > 0;
}

import type { Queryable } from "../pool.js";

export type EmotionCause = "turn" | "dream" | "api" | "decay";

export interface EmotionRow {
  id: number;
  at: Date;
  valence: number;
  arousal: number;
  cause: EmotionCause;
  source_id: string | null;
  stimulus_valence: number | null;
  stimulus_arousal: number | null;
}

export async function latestEmotion(db: Queryable): Promise<EmotionRow | undefined> {
  const res = await db.query<EmotionRow>(`select * from emotion_log order by at desc, id desc limit 1`);
  return res.rows[0];
}

export async function recentEmotions(db: Queryable, limit: number): Promise<EmotionRow[]> {
  const res = await db.query<EmotionRow>(`select * from emotion_log order by at desc, id desc limit $1`, [limit]);
  return res.rows;
}

export interface NewEmotion {
  valence: number;
  arousal: number;
  cause: EmotionCause;
  sourceId: string | null;
  stimulus: { valence: number; arousal: number } | null;
}

export async function insertEmotion(db: Queryable, e: NewEmotion): Promise<EmotionRow> {
  const res = await db.query<EmotionRow>(
    `insert into emotion_log (valence, arousal, cause, source_id, stimulus_valence, stimulus_arousal)
     values ($1, $2, $3, $4, $5, $6) returning *`,
    [e.valence, e.arousal, e.cause, e.sourceId, e.stimulus?.valence ?? null, e.stimulus?.arousal ?? null],
  );
  return res.rows[0]!;
}

/** Whether an event already moved the mood (memory jobs are retried). */
export async function emotionFromSource(db: Queryable, cause: EmotionCause, sourceId: string): Promise<boolean> {
  const res = await db.query(`select 1 from emotion_log where cause = $1 and source_id = $2 limit 1`, [cause, sourceId]);
  return (res.rowCount ?? 0) > 0;
}

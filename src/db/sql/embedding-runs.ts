import type { Queryable } from "../pool.js";

export type EmbeddingRunStatus = "queued" | "running" | "done" | "failed" | "superseded";

export interface EmbeddingRun {
  id: string;
  embedder: string;
  status: EmbeddingRunStatus;
  total: number | null;
  done: number;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** The run for `embedder` that is queued or running, if any. */
export async function activeRun(db: Queryable, embedder: string): Promise<EmbeddingRun | undefined> {
  const res = await db.query<EmbeddingRun>(
    `select * from embedding_runs where embedder = $1 and status in ('queued', 'running') order by created_at desc limit 1`,
    [embedder],
  );
  return res.rows[0];
}

export async function latestRun(db: Queryable): Promise<EmbeddingRun | undefined> {
  const res = await db.query<EmbeddingRun>(`select * from embedding_runs order by created_at desc limit 1`);
  return res.rows[0];
}

/** Queues a run; earlier active runs for other embedders are superseded. */
export async function insertRun(db: Queryable, id: string, embedder: string, total: number): Promise<void> {
  await db.query(
    `with old as (update embedding_runs set status = 'superseded', finished_at = now()
                  where status in ('queued', 'running') and embedder <> $2)
     insert into embedding_runs (id, embedder, total) values ($1, $2, $3)`,
    [id, embedder, total],
  );
}

export async function getRun(db: Queryable, id: string): Promise<EmbeddingRun | undefined> {
  const res = await db.query<EmbeddingRun>(`select * from embedding_runs where id = $1`, [id]);
  return res.rows[0];
}

export async function startRun(db: Queryable, id: string, total: number): Promise<void> {
  await db.query(`update embedding_runs set status = 'running', started_at = coalesce(started_at, now()), total = $2 where id = $1`, [
    id,
    total,
  ]);
}

export async function addRunProgress(db: Queryable, id: string, n: number): Promise<void> {
  await db.query(`update embedding_runs set done = done + $2 where id = $1`, [id, n]);
}

export async function endRun(
  db: Queryable,
  id: string,
  status: "done" | "failed" | "superseded",
  error: string | null = null,
): Promise<void> {
  await db.query(`update embedding_runs set status = $2, error = $3, finished_at = now() where id = $1`, [id, status, error]);
}

/** Live memories whose vectors are not from `embedder`. */
export async function staleMemoryCount(db: Queryable, embedder: string): Promise<number> {
  const res = await db.query<{ n: number }>(`select count(*)::int as n from memories where embedder <> $1 and deleted_at is null`, [
    embedder,
  ]);
  return res.rows[0]!.n;
}

export async function staleMemories(db: Queryable, embedder: string, limit: number): Promise<{ id: string; text: string }[]> {
  const res = await db.query<{ id: string; text: string }>(
    `select id, case when summary is null then content else summary || E'\\n' || content end as text
     from memories where embedder <> $1 and deleted_at is null order by created_at, id limit $2`,
    [embedder, limit],
  );
  return res.rows;
}

// SQL for consolidation: finding near-duplicate memories and folding one into another.
import type { Queryable } from "../pool.js";
import { literal, vec, type VectorSpace } from "./memories.js";

export interface NearDuplicate {
  id: string;
  twin: string;
  similarity: number;
}

/**
 * Live memories created after `since` (newest first, at most `limit`), each with its nearest
 * other live memory of the same kind, where that one is at least `similarity` alike. Superseded
 * ones are left alone: folded with a live twin, the older fact could outlive the newer.
 */
export async function nearDuplicates(
  db: Queryable,
  space: VectorSpace,
  since: Date | null,
  similarity: number,
  limit: number,
): Promise<NearDuplicate[]> {
  const v = vec(space);
  const e = literal(space.embedder);
  const res = await db.query<NearDuplicate>(
    `select m.id, n.id as twin, n.similarity
     from (select id, kind, embedding from memories
           where embedder = ${e} and deleted_at is null and superseded_at is null and created_at > coalesce($1::timestamptz, '-infinity')
           order by created_at desc limit $3) m
     cross join lateral (
       select o.id, 1 - ((o.embedding::${v}) <=> (m.embedding::${v})) as similarity
       from memories o where o.embedder = ${e} and o.deleted_at is null and o.superseded_at is null and o.id <> m.id and o.kind = m.kind
       order by (o.embedding::${v}) <=> (m.embedding::${v}) limit 1
     ) n
     where n.similarity >= $2`,
    [since, similarity, limit],
  );
  return res.rows;
}

/**
 * Folds `goneId` into `keepId`: the survivor gains its reinforcements (plus one), the higher
 * importance, its citations and tags; the other is soft-deleted, pointing at the survivor, and
 * memories that cited it cite the survivor. False when either is already gone.
 */
export async function foldMemory(db: Queryable, keepId: string, goneId: string): Promise<boolean> {
  const res = await db.query(
    `with gone as (
       update memories set deleted_at = now(), merged_into = $1
       where id = $2 and deleted_at is null and exists (select 1 from memories where id = $1 and deleted_at is null)
       returning reinforcements, importance, citations, tags
     )
     update memories m set reinforcements = m.reinforcements + 1 + gone.reinforcements,
       importance = greatest(m.importance, gone.importance),
       citations = array(select distinct c from unnest(m.citations || gone.citations) c where c <> m.id),
       tags = array(select distinct t from unnest(m.tags || gone.tags) t)
     from gone where m.id = $1`,
    [keepId, goneId],
  );
  if ((res.rowCount ?? 0) === 0) return false;
  await db.query(
    `update memories set citations = array_replace(citations, $2::uuid, $1::uuid) where $2::uuid = any(citations) and id <> $1`,
    [keepId, goneId],
  );
  return true;
}

/** Which of two memories to keep: the more important, then the older. */
export async function survivorOf(db: Queryable, a: string, b: string): Promise<{ keep: string; gone: string } | undefined> {
  const res = await db.query<{ id: string }>(
    `select id from memories where id in ($1, $2) and deleted_at is null order by importance desc, created_at asc, id`,
    [a, b],
  );
  if (res.rows.length < 2) return undefined;
  return { keep: res.rows[0]!.id, gone: res.rows[1]!.id };
}

/** When the last consolidation that finished began (null: never). */
export async function lastConsolidation(db: Queryable): Promise<Date | null> {
  const res = await db.query<{ at: Date | null }>(
    `select max(started_at) as at from dream_journal where kind = 'consolidate' and status = 'done'`,
  );
  return res.rows[0]?.at ?? null;
}

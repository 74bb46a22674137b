// SQL for a memory's history (migration 000021): each version as it was, with when and by
// what it changed, and supersession (a newer memory replacing older ones).
import type { Queryable } from "../pool.js";

/** What made a change: a surface (API, MCP, an import), a background job, or for a first version where the memory came from. */
export type ChangedBy = "api" | "mcp" | "consolidation" | "supersession" | "import" | "conversation" | "turn" | "dream" | "tool" | "ghap";
export type Change = "created" | "corrected" | "reinforced" | "folded" | "folded_into" | "superseded" | "imported";

export interface MemoryVersion {
  version: number;
  at: Date;
  by: ChangedBy;
  change: Change;
  content: string;
  summary: string | null;
  tags: string[];
  importance: number;
  related: string[];
}

const VERSION_COLUMNS = "version, at, by, change, content, summary, tags, importance, related";

/** Records a memory's first version as it was stored (version 1). */
export async function recordFirstVersion(
  db: Queryable,
  id: string,
  by: ChangedBy,
  change: Change = "created",
  related: readonly string[] = [],
) {
  await db.query(
    `insert into memory_versions (memory_id, version, at, by, change, content, summary, tags, importance, related)
     select id, version, updated_at, $2, $3, content, summary, tags, importance, $4::uuid[] from memories where id = $1
     on conflict do nothing`,
    [id, by, change, related],
  );
}

/**
 * Records what a memory is now as its next version: call after changing the row, in the same
 * transaction. Returns the version number, or undefined when the memory is gone.
 */
export async function recordVersion(
  db: Queryable,
  id: string,
  by: ChangedBy,
  change: Change,
  related: readonly string[] = [],
): Promise<number | undefined> {
  const res = await db.query<{ version: number }>(
    `with bumped as (
       update memories set version = version + 1, updated_at = now() where id = $1
       returning id, version, updated_at, content, summary, tags, importance
     )
     insert into memory_versions (memory_id, version, at, by, change, content, summary, tags, importance, related)
     select id, version, updated_at, $2, $3, content, summary, tags, importance, $4::uuid[] from bumped
     returning version`,
    [id, by, change, related],
  );
  return res.rows[0]?.version;
}

/** Every version of a memory, oldest first (empty when there is no such memory). */
export async function memoryHistory(db: Queryable, id: string): Promise<MemoryVersion[]> {
  const res = await db.query<MemoryVersion>(`select ${VERSION_COLUMNS} from memory_versions where memory_id = $1 order by version`, [id]);
  return res.rows;
}

/** The histories of several memories, by id (for export). */
export async function memoryHistories(db: Queryable, ids: readonly string[]): Promise<Map<string, MemoryVersion[]>> {
  const res = await db.query<MemoryVersion & { memory_id: string }>(
    `select memory_id, ${VERSION_COLUMNS} from memory_versions where memory_id = any($1::uuid[]) order by memory_id, version`,
    [ids],
  );
  const byId = new Map<string, MemoryVersion[]>();
  for (const { memory_id, ...v } of res.rows) byId.set(memory_id, [...(byId.get(memory_id) ?? []), v]);
  return byId;
}

/** Writes an imported memory's history as it was exported (its versions, their times and authors). */
export async function insertVersions(db: Queryable, id: string, versions: readonly MemoryVersion[]): Promise<void> {
  if (!versions.length) return;
  await db.query(
    `insert into memory_versions (memory_id, version, at, by, change, content, summary, tags, importance, related)
     select $1, v.version, v.at, v.by, v.change, v.content, v.summary, coalesce(v.tags, '{}'), v.importance, coalesce(v.related, '{}')
     from jsonb_to_recordset($2::jsonb) as v(version int, at timestamptz, by text, change text, content text, summary text,
       tags text[], importance real, related uuid[])
     on conflict do nothing`,
    [id, JSON.stringify(versions)],
  );
}

/**
 * Marks `oldIds` as superseded by `newId` (those live and not superseded already) and adds them
 * to its `supersedes`. Returns the ids it marked. In the caller's transaction.
 */
export async function supersede(db: Queryable, newId: string, oldIds: readonly string[]): Promise<string[]> {
  if (!oldIds.length) return [];
  const res = await db.query<{ id: string }>(
    `update memories set superseded_by = $1, superseded_at = now()
     where id = any($2::uuid[]) and id <> $1 and deleted_at is null and superseded_at is null
     returning id`,
    [newId, oldIds],
  );
  const marked = res.rows.map((r) => r.id);
  if (marked.length)
    await db.query(`update memories set supersedes = array(select distinct x from unnest(supersedes || $2::uuid[]) x) where id = $1`, [
      newId,
      marked,
    ]);
  return marked;
}

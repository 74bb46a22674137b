// SQL for memories. Statements that use an embedder's vectors name it, and its size, as
// literals: its partial HNSW index is chosen only when the planner sees them in the text.
import pgvector from "pgvector";
import type { Queryable } from "../pool.js";
import { CUSTOM_PLAN } from "../prepared.js";

export type MemoryKind = "episodic" | "semantic" | "dream" | "insight";
export type MemorySourceKind = "api" | "conversation" | "turn" | "dream" | "tool" | "ghap";

export interface MemoryRow {
  id: string;
  kind: MemoryKind;
  content: string;
  summary: string | null;
  tags: string[];
  importance: number;
  valence: number;
  arousal: number;
  embedder: string;
  source_kind: MemorySourceKind;
  source_id: string | null;
  /** The conversation it came from, if any (its neighbours there lend it full-text context). */
  conversation_id: string | null;
  citations: string[];
  created_at: Date;
  last_accessed_at: Date;
  access_count: number;
  reinforcements: number;
  deleted_at: Date | null;
  /** When it last changed, and its version then (db/sql/memory-versions.ts keeps each). */
  updated_at: Date;
  version: number;
  /** Memories this one replaced. */
  supersedes: string[];
  /** The memory that replaced this one, and when: it is then left out of default search. */
  superseded_by: string | null;
  superseded_at: Date | null;
  /** The scope it belongs to (src/scope.ts). */
  scope: string;
}

const COLUMNS = `id, kind, content, summary, tags, importance, valence, arousal, embedder, source_kind, source_id,
  conversation_id, citations, created_at, last_accessed_at, access_count, reinforcements, deleted_at,
  updated_at, version, supersedes, superseded_by, superseded_at, scope`;

/** An embedder as SQL sees it. The id was checked by embedderId() to be plain. */
export interface VectorSpace {
  embedder: string;
  dimensions: number;
}

/** An embedder id as an SQL literal (it was checked by embedderId() to be plain; checked again here). */
export const literal = (id: string) => {
  if (!/^[A-Za-z0-9._-]+$/.test(id)) throw new Error(`embedder id ${JSON.stringify(id)} is not plain`);
  return `'${id}'`;
};
export const vec = (space: VectorSpace) => `vector(${Math.trunc(space.dimensions)})`;

export function indexName(space: VectorSpace): string {
  return `memories_hnsw_${space.embedder.toLowerCase().replace(/[^a-z0-9]+/g, "_")}`.slice(0, 63);
}

/** The partial HNSW index for this embedder's vectors (the built-in one is in the migration). */
export async function ensureVectorIndex(db: Queryable, space: VectorSpace): Promise<void> {
  await db.query(
    `create index if not exists ${indexName(space)} on memories using hnsw ((embedding::${vec(space)}) vector_cosine_ops)
     where embedder = ${literal(space.embedder)} and deleted_at is null`,
  );
}

export const toVector = (v: readonly number[]) => pgvector.toSql(Array.from(v)) as string;

export interface Neighbour {
  id: string;
  similarity: number;
}

/** The live memories nearest to `vector` in this embedder's space, by cosine similarity. */
export async function nearestMemories(db: Queryable, space: VectorSpace, vector: readonly number[], k: number): Promise<Neighbour[]> {
  const res = await db.query<Neighbour>(
    `select id, 1 - ((embedding::${vec(space)}) <=> $1::${vec(space)}) as similarity
     from memories where embedder = ${literal(space.embedder)} and deleted_at is null
     order by (embedding::${vec(space)}) <=> $1::${vec(space)} limit $2`,
    [toVector(vector), k],
  );
  return res.rows;
}

export interface NewMemory {
  kind: MemoryKind;
  content: string;
  summary: string | null;
  tags: string[];
  importance: number;
  valence: number;
  arousal: number;
  embedding: readonly number[];
  embedder: string;
  sourceKind: MemorySourceKind;
  sourceId: string | null;
  conversationId: string | null;
  citations: string[];
  /** Default: default. */
  scope?: string | undefined;
  /** An imported memory keeps what it had: its id, times and counts (all optional). */
  kept?: Partial<
    Pick<
      MemoryRow,
      | "id"
      | "created_at"
      | "updated_at"
      | "last_accessed_at"
      | "access_count"
      | "reinforcements"
      | "version"
      | "supersedes"
      | "superseded_by"
      | "superseded_at"
    >
  >;
}

export async function insertMemory(db: Queryable, m: NewMemory): Promise<MemoryRow> {
  const k = m.kept ?? {};
  const res = await db.query<MemoryRow>(
    `insert into memories (kind, content, summary, tags, importance, valence, arousal, embedding, embedder, source_kind, source_id, citations, conversation_id,
       id, created_at, last_accessed_at, access_count, reinforcements, version, updated_at, supersedes, superseded_by, superseded_at, scope)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
       coalesce($14::uuid, gen_random_uuid()), coalesce($15::timestamptz, now()), coalesce($16::timestamptz, now()),
       coalesce($17::int, 0), coalesce($18::int, 0), coalesce($19::int, 1), coalesce($20::timestamptz, now()),
       coalesce($21::uuid[], '{}'), $22::uuid, $23::timestamptz, coalesce($24::text, 'default'))
     returning ${COLUMNS}`,
    [
      m.kind,
      m.content,
      m.summary,
      m.tags,
      m.importance,
      m.valence,
      m.arousal,
      toVector(m.embedding),
      m.embedder,
      m.sourceKind,
      m.sourceId,
      m.citations,
      m.conversationId,
      k.id ?? null,
      k.created_at ?? null,
      k.last_accessed_at ?? null,
      k.access_count ?? null,
      k.reinforcements ?? null,
      k.version ?? null,
      k.updated_at ?? null,
      k.supersedes ?? null,
      k.superseded_by ?? null,
      k.superseded_at ?? null,
      m.scope ?? null,
    ],
  );
  return res.rows[0]!;
}

/** A correction's new values; the text's new vector with it when the text changed. */
export interface MemoryPatch {
  content?: string | undefined;
  summary?: string | null | undefined;
  tags?: string[] | undefined;
  importance?: number | undefined;
  embedding?: { vector: readonly number[]; embedder: string } | undefined;
}

/** Changes a live memory in place (its history is recorded by the caller). Undefined when it is gone. */
export async function updateMemory(db: Queryable, id: string, p: MemoryPatch): Promise<MemoryRow | undefined> {
  const res = await db.query<MemoryRow>(
    `update memories set content = coalesce($2, content), summary = case when $3 then $4 else summary end,
       tags = coalesce($5, tags), importance = coalesce($6, importance),
       embedding = coalesce($7::vector, embedding), embedder = coalesce($8, embedder)
     where id = $1 and deleted_at is null returning ${COLUMNS}`,
    [
      id,
      p.content ?? null,
      p.summary !== undefined,
      p.summary ?? null,
      p.tags ?? null,
      p.importance ?? null,
      p.embedding ? toVector(p.embedding.vector) : null,
      p.embedding?.embedder ?? null,
    ],
  );
  return res.rows[0];
}

/** A memory's scope, deleted or not (its history outlives it until purged); undefined when there is no row. */
export async function scopeOf(db: Queryable, id: string): Promise<string | undefined> {
  const res = await db.query<{ scope: string }>(`select scope from memories where id = $1`, [id]);
  return res.rows[0]?.scope;
}

/** Whether a memory with this id exists at all, deleted or not (imports are idempotent by id). */
export async function memoryExists(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query(`select 1 from memories where id = $1`, [id]);
  return (res.rowCount ?? 0) > 0;
}

/**
 * Live memories (of `scopes`, or all) in the order they were made, `limit` after the memory
 * `afterId` (export pages). The page boundary is read from the row itself: a time that went
 * through a JS Date lost its microseconds, and would find its own row again.
 */
export async function memoriesInOrder(
  db: Queryable,
  afterId: string | null,
  limit: number,
  withEmbedding: boolean,
  scopes: readonly string[] | null = null,
): Promise<(MemoryRow & { embedding?: string })[]> {
  const res = await db.query<MemoryRow & { embedding?: string }>(
    `select ${COLUMNS}${withEmbedding ? ", embedding::text as embedding" : ""} from memories
     where deleted_at is null
       and ($1::uuid is null or (created_at, id) > (select a.created_at, a.id from memories a where a.id = $1::uuid))
       and ($3::text[] is null or scope = any($3))
     order by created_at, id limit $2`,
    [afterId, limit, scopes],
  );
  return res.rows;
}

/**
 * Folds a near-duplicate into an existing memory: it counts as recalled again, keeps the
 * higher importance plus a little, and gains the new tags. Returns undefined if it is gone.
 */
export async function reinforceMemory(db: Queryable, id: string, importance: number, tags: string[]): Promise<MemoryRow | undefined> {
  const res = await db.query<MemoryRow>(
    `update memories set reinforcements = reinforcements + 1, access_count = access_count + 1, last_accessed_at = now(),
       importance = least(1, greatest(importance, $2) + 0.05),
       tags = (select coalesce(array_agg(distinct t), '{}') from unnest(tags || $3::text[]) t)
     where id = $1 and deleted_at is null returning ${COLUMNS}`,
    [id, importance, tags],
  );
  return res.rows[0];
}

export async function getMemory(db: Queryable, id: string): Promise<MemoryRow | undefined> {
  const res = await db.query<MemoryRow>(`select ${COLUMNS} from memories where id = $1 and deleted_at is null`, [id]);
  return res.rows[0];
}

/** Soft delete: the memory leaves every search at once and is purged later. */
export async function softDeleteMemory(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query(`update memories set deleted_at = now() where id = $1 and deleted_at is null`, [id]);
  return (res.rowCount ?? 0) > 0;
}

/** Removes the row of a memory deleted earlier (or now, when asked to purge at once). */
export async function purgeMemory(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query(`delete from memories where id = $1 and deleted_at is not null`, [id]);
  return (res.rowCount ?? 0) > 0;
}

/** Purges memories soft-deleted more than `afterSeconds` ago; returns how many. */
export async function purgeDeletedMemories(db: Queryable, afterSeconds: number): Promise<number> {
  const res = await db.query(`delete from memories where deleted_at < now() - make_interval(secs => $1)`, [afterSeconds]);
  return res.rowCount ?? 0;
}

/** What ranking needs of a candidate: its scores and the few columns that break ties. */
export interface CandidateScore extends Pick<MemoryRow, "id" | "kind" | "importance" | "conversation_id" | "created_at"> {
  /** Cosine similarity; null when the memory's vector is from another embedder. */
  similarity: number | null;
  /** Its place among the nearest vectors (1 = nearest); null when not among them. */
  vector_rank: number | null;
  /** Its BM25 score for the query; 0 when it matched no term. */
  text_score: number;
  /** The share of the query's weight among the terms it matched (db/sql/memory-terms.ts, TextMatch); 0 when none. */
  text_coverage: number;
}

/** A memory as a search returns it: the whole row and its scores. */
export type Candidate = MemoryRow & CandidateScore;

/**
 * Retrieval candidates: the `limit` nearest vectors (at least `minSimilarity`) and the given
 * full-text matches (db/sql/memory-terms.ts), each with its similarity and text score. Without
 * their text: a hundred long conversational turns are ~150k characters, and moving them cost a
 * search more than finding them (bench/retrieval.ts); readRecalled() reads the few kept.
 */
export async function memoryCandidates(
  db: Queryable,
  space: VectorSpace,
  q: {
    vector: readonly number[];
    text: readonly { id: string; score: number; coverage: number }[];
    limit: number;
    minSimilarity: number;
    /** Memories a newer one replaced are left out unless asked for. */
    includeSuperseded?: boolean;
    /** Only memories of these scopes; every scope when undefined. */
    scopes?: readonly string[] | undefined;
    /**
     * Memories of this conversation are left out (a chat's transcript holds them already): of
     * the nearest vectors here, and of `text` by bm25Matches, before each takes its best.
     */
    exceptConversation?: string | undefined;
  },
): Promise<CandidateScore[]> {
  const v = vec(space);
  // Planned for its values each time: a generic plan cannot see how many rows the scope and
  // superseded filters keep (docs/decisions.md, "Full-text search is planned for its values").
  const res = await db.query<CandidateScore>(
    `${CUSTOM_PLAN}
     with nearest as (
       select id, (embedding::${v}) <=> $1::${v} as distance
       from memories where embedder = ${literal(space.embedder)} and deleted_at is null
         and ($9::text is null or conversation_id is distinct from $9)
       order by (embedding::${v}) <=> $1::${v} limit $4
     ), by_vector as (
       select id, row_number() over (order by distance) as r from nearest where 1 - distance >= $5
     ), by_text as (
       select * from unnest($2::uuid[], $3::float8[], $8::float8[]) as x(id, score, coverage)
     )
     select m.id, m.kind, m.importance, m.conversation_id, m.created_at,
       case when m.embedder = ${literal(space.embedder)} then 1 - ((m.embedding::${v}) <=> $1::${v}) end as similarity,
       bv.r::int as vector_rank, coalesce(bt.score, 0)::float8 as text_score,
       coalesce(bt.coverage, 0)::float8 as text_coverage
     from memories m
     left join by_vector bv on bv.id = m.id
     left join by_text bt on bt.id = m.id
     where m.deleted_at is null and (m.superseded_at is null or $6) and ($7::text[] is null or m.scope = any($7))
       and m.id in (select id from by_vector union select id from by_text)`,
    [
      toVector(q.vector),
      q.text.map((t) => t.id),
      q.text.map((t) => t.score),
      q.limit,
      q.minSimilarity,
      q.includeSuperseded === true,
      q.scopes ?? null,
      q.text.map((t) => t.coverage),
      q.exceptConversation ?? null,
    ],
  );
  return res.rows;
}

/**
 * The memories a search keeps, read whole, and counted as recalled (access time and count move)
 * in the same statement. The rows are as they were before this recall: a data-modifying WITH
 * shares its snapshot with the select. A memory deleted since it was ranked is left out.
 */
export async function readRecalled(db: Queryable, ids: readonly string[]): Promise<MemoryRow[]> {
  if (ids.length === 0) return [];
  const res = await db.query<MemoryRow>(
    `with marked as (
       update memories set last_accessed_at = now(), access_count = access_count + 1
       where id = any($1::uuid[]) and deleted_at is null returning id
     )
     select ${COLUMNS} from memories where id in (select id from marked)`,
    [ids],
  );
  return res.rows;
}

export interface MemoryCounts {
  total: number;
  deleted: number;
  byEmbedder: Record<string, number>;
}

export async function memoryCounts(db: Queryable): Promise<MemoryCounts> {
  const res = await db.query<{ embedder: string | null; live: number; deleted: number }>(
    `select embedder, count(*) filter (where deleted_at is null)::int as live, count(*) filter (where deleted_at is not null)::int as deleted
     from memories group by rollup (embedder)`,
  );
  const byEmbedder: Record<string, number> = {};
  let total = 0;
  let deleted = 0;
  for (const row of res.rows) {
    if (row.embedder === null) {
      total = row.live;
      deleted = row.deleted;
    } else if (row.live > 0) byEmbedder[row.embedder] = row.live;
  }
  return { total, deleted, byEmbedder };
}

/** Replaces memories' vectors with ones from `space`'s embedder (re-embedding). */
export async function setEmbeddings(
  db: Queryable,
  space: VectorSpace,
  rows: readonly { id: string; vector: readonly number[] }[],
): Promise<number> {
  if (rows.length === 0) return 0;
  const res = await db.query(
    `update memories m set embedding = v.embedding::vector, embedder = $3
     from unnest($1::uuid[], $2::text[]) as v(id, embedding) where m.id = v.id and m.deleted_at is null`,
    [rows.map((r) => r.id), rows.map((r) => toVector(r.vector)), space.embedder],
  );
  return res.rowCount ?? 0;
}

export async function memoryFromSource(db: Queryable, sourceKind: MemorySourceKind, sourceId: string): Promise<boolean> {
  const res = await db.query(`select 1 from memories where source_kind = $1 and source_id = $2 limit 1`, [sourceKind, sourceId]);
  return (res.rowCount ?? 0) > 0;
}

/** Whether a live memory of the conversation carries `tag` and was made in the last `seconds`. */
export async function taggedInConversationSince(db: Queryable, conversationId: string, tag: string, seconds: number): Promise<boolean> {
  const res = await db.query(
    `select 1 from memories where conversation_id = $1 and $2 = any(tags) and deleted_at is null and created_at > now() - make_interval(secs => $3) limit 1`,
    [conversationId, tag, seconds],
  );
  return (res.rowCount ?? 0) > 0;
}

/**
 * Significant insights and dreams from the last `hours`, newest first: what a chat may be
 * offered as background after Psyche has been dreaming.
 */
export async function recentInsights(
  db: Queryable,
  minImportance: number,
  hours: number,
  limit: number,
  kinds: readonly MemoryKind[] = ["insight", "dream"],
  scopes: readonly string[] | null = null,
): Promise<MemoryRow[]> {
  const res = await db.query<MemoryRow>(
    `select ${COLUMNS} from memories
     where deleted_at is null and kind = any($4::text[]) and importance >= $1 and created_at > now() - make_interval(hours => $2)
       and ($5::text[] is null or scope = any($5))
     order by created_at desc limit $3`,
    [minImportance, hours, limit, kinds, scopes ?? null],
  );
  return res.rows;
}

/** The newest live memories (of `scopes`, or all), for listing (MCP resources). */
export async function newestMemories(
  db: Queryable,
  limit: number,
  scopes: readonly string[] | null = null,
): Promise<Pick<MemoryRow, "id" | "kind" | "content" | "created_at" | "scope">[]> {
  const res = await db.query<Pick<MemoryRow, "id" | "kind" | "content" | "created_at" | "scope">>(
    `select id, kind, left(content, 200) as content, created_at, scope from memories
     where deleted_at is null and ($2::text[] is null or scope = any($2)) order by created_at desc limit $1`,
    [limit, scopes],
  );
  return res.rows;
}

// The BM25 index (migrations/000007_bm25.sql): memories' weighted terms and their statistics.
// Term '' is a memory's length; its statistics row holds the number of memories and their
// total length. Triggers keep memory_term_stats in step with memory_terms.
import type { Queryable } from "../pool.js";
import { CUSTOM_PLAN } from "../prepared.js";

/** Terms and their weights, as parallel arrays (one unnest in SQL); '' is the length. */
export interface WeightedTerms {
  terms: string[];
  weights: number[];
}

/** A memory's terms as indexed now (empty when it is not in the index). */
export async function memoryTerms(db: Queryable, memoryId: string): Promise<WeightedTerms> {
  const res = await db.query<{ term: string; tf: number }>("select term, tf from memory_terms where memory_id = $1", [memoryId]);
  return { terms: res.rows.map((r) => r.term), weights: res.rows.map((r) => r.tf) };
}

/**
 * Replaces a memory's terms. Its rows are deleted and inserted in one statement, so the
 * statistics triggers see every change; `list` must hold '' (the length).
 */
export async function replaceMemoryTerms(db: Queryable, memoryId: string, list: WeightedTerms): Promise<void> {
  const length = list.weights[list.terms.indexOf("")];
  if (length === undefined) throw new Error("a memory's terms need its length ('')");
  await db.query(
    // The insert reads the delete's count, so the old rows are gone before the new ones go in.
    `with gone as (delete from memory_terms where memory_id = $1 returning 1)
     insert into memory_terms (term, memory_id, tf, dl)
     select term, $1, tf, $4 from unnest($2::text[], $3::real[]) as x(term, tf) where (select count(*) from gone) >= 0`,
    [memoryId, list.terms, list.weights, length],
  );
}

/** Indexes memories that have no terms yet, in one statement (each list must hold ''). */
export async function insertMemoryTerms(db: Queryable, lists: readonly { memoryId: string; list: WeightedTerms }[]): Promise<void> {
  const ids: string[] = [];
  const terms: string[] = [];
  const tfs: number[] = [];
  const dls: number[] = [];
  for (const { memoryId, list } of lists) {
    const length = list.weights[list.terms.indexOf("")] ?? 0;
    list.terms.forEach((t, i) => {
      ids.push(memoryId);
      terms.push(t);
      tfs.push(list.weights[i]!);
      dls.push(length);
    });
  }
  if (ids.length === 0) return;
  await db.query(
    "insert into memory_terms (memory_id, term, tf, dl) select * from unnest($1::uuid[], $2::text[], $3::real[], $4::real[])",
    [ids, terms, tfs, dls],
  );
}

export interface ConversationNeighbour {
  id: string;
  content: string;
  summary: string | null;
}

/** The latest live memory of a conversation: the neighbour a new memory of it is indexed beside. */
export async function latestInConversation(db: Queryable, conversationId: string): Promise<ConversationNeighbour | undefined> {
  const res = await db.query<ConversationNeighbour>(
    `select id, content, summary from memories where conversation_id = $1 and deleted_at is null order by created_at desc, id desc limit 1`,
    [conversationId],
  );
  return res.rows[0];
}

/** Live memories not in the index yet (stored before it existed), oldest first. */
export async function unindexedMemories(db: Queryable, limit: number): Promise<{ id: string; content: string; summary: string | null }[]> {
  const res = await db.query<{ id: string; content: string; summary: string | null }>(
    `select id, content, summary from memories m
     where deleted_at is null and not exists (select 1 from memory_terms t where t.term = '' and t.memory_id = m.id)
     order by created_at, id limit $1`,
    [limit],
  );
  return res.rows;
}

export interface TextMatch {
  id: string;
  score: number;
  /**
   * The share of the query's weight (its terms' idf summed) among the terms the memory matches,
   * in [0, 1]. A term no memory holds weighs as the rarest: a question about something never
   * said is not answered by memories that share its other words. BM25's score is relative to
   * the other candidates; this says how much of the question a memory speaks to at all.
   */
  coverage: number;
}

/**
 * The `limit` best memories for `terms` by Okapi BM25: any term may match, rarer terms weigh
 * more (idf), and a memory's length is normalised against the average (b). Each term brings
 * at most `perTerm` matches, its densest (all of them unless it is very common), so the work
 * is bounded however many memories there are; a memory that matches only common terms, and
 * none of them densely, is the one that can be missed, and it would rank low anyway.
 */
export async function bm25Matches(
  db: Queryable,
  terms: readonly string[],
  o: {
    limit: number;
    perTerm: number;
    k1: number;
    b: number;
    /**
     * Memories of this conversation are left out before the best `limit` are taken, so a long
     * conversation's own matches do not use up the places (memories.ts, memoryCandidates).
     */
    exceptConversation?: string | undefined;
  },
): Promise<TextMatch[]> {
  if (terms.length === 0) return [];
  const res = await db.query<TextMatch>(
    `${CUSTOM_PLAN}
     with corpus as (
       select greatest(df, 1)::float8 as n, greatest(total_tf / greatest(df, 1), 1e-9)::float8 as avgdl from memory_term_stats where term = ''
     ), q as (
       select u.term, coalesce(s.df, 0) as df, ln(1 + (c.n - coalesce(s.df, 0) + 0.5) / (coalesce(s.df, 0) + 0.5)) as idf
       from unnest($1::text[]) as u(term) cross join corpus c left join memory_term_stats s on s.term = u.term
       where u.term <> ''
     )
     select t.memory_id as id,
       sum(q.idf * t.tf * ($4::float8 + 1) / (t.tf + $4::float8 * (1 - $5::float8 + $5::float8 * t.dl / c.avgdl)))::float8 as score,
       (sum(q.idf) / (select sum(idf) from q))::float8 as coverage
     from q cross join lateral (
       select memory_id, tf, dl from memory_terms m where m.term = q.term order by m.tf / greatest(m.dl, 1) desc limit $3
     ) t cross join corpus c
     where q.df > 0
       and ($6::text is null or not exists (select 1 from memories x where x.id = t.memory_id and x.conversation_id = $6))
     group by t.memory_id order by score desc, t.memory_id limit $2`,
    [terms, o.limit, o.perTerm, o.k1, o.b, o.exceptConversation ?? null],
  );
  return res.rows;
}

/**
 * Dead rows from rewritten terms, and fresh statistics for the planner: a real Postgres's
 * autovacuum does this by itself, the embedded one has none.
 */
export async function tidyTextIndex(db: Queryable): Promise<void> {
  await db.query("vacuum (analyze) memory_terms, memory_term_stats");
}

/** How many memories hold each of `terms`, and how many there are (the '' row's df): for topics' rarity. */
export async function termRarity(db: Queryable, terms: readonly string[]): Promise<{ memories: number; df: Map<string, number> }> {
  const res = await db.query<{ term: string; df: number }>(
    `select term, df from memory_term_stats where term = any($1::text[]) or term = ''`,
    [[...terms]],
  );
  const df = new Map(res.rows.map((r) => [r.term, Number(r.df)]));
  return { memories: df.get("") ?? 0, df };
}

// Long-term memory (docs/memory-and-mood.md): store with hygiene, retrieve by relevance, recency
// and importance, forget for real. Built once per process and passed in.
import { inTransaction, type Pool, type Queryable } from "../db/pool.js";
import {
  type Candidate,
  getMemory,
  insertMemory,
  memoryCandidates,
  type MemoryKind,
  type MemoryRow,
  type MemorySourceKind,
  nearestMemories,
  purgeMemory,
  readRecalled,
  recentInsights,
  reinforceMemory,
  softDeleteMemory,
  updateMemory,
  type VectorSpace,
} from "../db/sql/memories.js";
import {
  type ChangedBy,
  memoryHistory,
  type MemoryVersion,
  recordFirstVersion,
  recordVersion,
  supersede,
} from "../db/sql/memory-versions.js";
import { UserError } from "../errors.js";
import { holdsNul } from "../db/nul.js";
import { DEFAULT_SCOPE, readableScopes } from "../scope.js";
import type { Embedder } from "./embedder.js";
import { bm25Matches, latestInConversation, unindexedMemories } from "../db/sql/memory-terms.js";
import { terms } from "./analyzer.js";
import { bearsOn, type RankSettings, type Ranked, type RecallFloor, rankMemories, seatConversations } from "./ranking.js";
import { type Foldable, saySameThing } from "./same-thing.js";
import { BM25, indexMemories, indexMemory, reindexMemory } from "./text-index.js";
import type { Scorer } from "./scorer.js";
import { AdvisoryLock, lockForTransaction } from "../db/sql/locks.js";

/** Kinds that recall() never returns. */
const NOT_RECALLED: readonly MemoryKind[] = ["dream"];

/** The longest memory anyone may store (the HTTP API and MCP check it). */
export const MAX_MEMORY_CHARS = 20_000;

/** Full-text matches ranked beside the nearest vectors: enough for a conversation's other turns to lift its best. */
export const TEXT_CANDIDATES = 100;
/** The nearest vectors ranked beside them. pgvector's HNSW search returns at most hnsw.ef_search (40 by default) rows. */
export const vectorCandidates = (k: number): number => Math.min(40, Math.max(20, k * 2));
/**
 * Matches read per query term: all of a rare term's, a very common term's densest. At 100k
 * memories 500 halves the full-text time of 1,000 (bench/memory.ts).
 */
const MATCHES_PER_TERM = 500;

export interface MemorySettings {
  rank: RankSettings;
  /** A new memory at least this similar to a stored one that says the same thing reinforces it instead. */
  duplicateSimilarity: number;
}

export interface MemoryDeps {
  pool: Pool;
  embedder: Embedder;
  scorer: Scorer;
  settings: MemorySettings;
}

export interface RememberInput {
  kind: MemoryKind;
  content: string;
  summary?: string | null;
  tags?: string[];
  /** Given by the caller; otherwise scored (significance and novelty). */
  importance?: number | undefined;
  sourceKind: MemorySourceKind;
  sourceId?: string | null;
  /** The conversation it came from: its neighbours there lend it full-text context. */
  conversationId?: string | null;
  citations?: string[];
  toolCalls?: number;
  /** Memories this one replaces: they leave default search and keep their history. */
  supersedes?: string[] | undefined;
  /** Who stores it, for its history; default its source kind. */
  by?: ChangedBy | undefined;
  /** The scope it belongs to (default: default); what it supersedes must be readable from there. */
  scope?: string | undefined;
  /**
   * When what it records happened, if not now (dated dialogue replayed, bench/retrieval.ts):
   * recency counts from it (ranking.ts).
   */
  formedAt?: Date | undefined;
  signal?: AbortSignal | undefined;
}

export interface SearchOptions {
  /** Kinds left out. */
  exclude?: readonly MemoryKind[] | undefined;
  /** Memories a newer one replaced come too. */
  includeSuperseded?: boolean | undefined;
  /** Only these scopes' memories (a request's readableScopes); every scope when undefined. */
  scopes?: readonly string[] | undefined;
  /** Overrides the settings' share of seats for strong conversations (ranking.ts, seatConversations). */
  conversationSeats?: number | undefined;
  /** Memories of this conversation are left out: a chat's prompt holds its transcript already. */
  exceptConversation?: string | undefined;
  /** Of the top k, only those that reach it (ranking.ts, bearsOn): fewer than k, or none. */
  floor?: RecallFloor | undefined;
  /** The moment recency counts to (ranking.ts); default now. */
  asOf?: Date | undefined;
}

/** What recall() narrows a search by. */
export type RecallOptions = { signal?: AbortSignal | undefined } & Pick<SearchOptions, "scopes" | "floor" | "exceptConversation" | "asOf">;

/** A correction: the fields that change, and what the corrected memory replaces besides. */
export interface Correction {
  content?: string | undefined;
  summary?: string | null | undefined;
  tags?: string[] | undefined;
  importance?: number | undefined;
  supersedes?: string[] | undefined;
}

export interface Remembered {
  memory: MemoryRow;
  /** True when a near-duplicate existed and was reinforced instead. */
  reinforced: boolean;
  /** The text's affect and scored importance (whatever importance was stored). */
  scored: { valence: number; arousal: number; importance: number };
}

export class Memory {
  constructor(private readonly deps: MemoryDeps) {}

  get space(): VectorSpace {
    return { embedder: this.deps.embedder.id, dimensions: this.deps.embedder.dimensions };
  }

  get embedder(): Embedder {
    return this.deps.embedder;
  }

  async remember(input: RememberInput): Promise<Remembered> {
    storable({ content: input.content, summary: input.summary, tags: input.tags });
    const text = input.summary ? `${input.summary}\n${input.content}` : input.content;
    const [vector] = await this.deps.embedder.embed([text], input.signal);
    const [nearest] = await nearestMemories(this.deps.pool, this.space, vector!, 1);
    const scored = await this.deps.scorer.score({
      text: input.content,
      toolCalls: input.toolCalls ?? 0,
      maxSimilarity: nearest?.similarity ?? null,
    });
    const importance = input.importance ?? scored.importance;
    const tags = input.tags ?? [];
    const by = input.by ?? input.sourceKind;
    const scope = input.scope ?? DEFAULT_SCOPE;
    return inTransaction(this.deps.pool, async (client) => {
      // Serialises the duplicate check with the insert, so two stores of one text make one row.
      await lockForTransaction(client, AdvisoryLock.memoryStore);
      await this.mustExist(client, input.supersedes, readableScopes(scope));
      const twin = input.supersedes?.length
        ? undefined
        : await this.twinOf(client, vector!, { content: input.content, conversation_id: input.conversationId ?? null }, scope);
      if (twin) {
        const reinforced = await reinforceMemory(client, twin.id, importance, tags);
        if (reinforced) {
          await recordVersion(client, twin.id, by, "reinforced");
          return { memory: (await getMemory(client, twin.id))!, reinforced: true, scored };
        }
      }
      const neighbour = input.conversationId ? await latestInConversation(client, input.conversationId) : undefined;
      const memory = await insertMemory(client, {
        kind: input.kind,
        content: input.content,
        summary: input.summary ?? null,
        tags,
        importance,
        valence: scored.valence,
        arousal: scored.arousal,
        embedding: vector!,
        embedder: this.deps.embedder.id,
        sourceKind: input.sourceKind,
        sourceId: input.sourceId ?? null,
        conversationId: input.conversationId ?? null,
        citations: input.citations ?? [],
        scope,
        kept: input.formedAt ? { created_at: input.formedAt, updated_at: input.formedAt } : undefined,
      });
      await indexMemory(client, memory, neighbour);
      await recordFirstVersion(client, memory.id, by, "created", input.supersedes ?? []);
      if (!input.supersedes?.length) return { memory, reinforced: false, scored };
      await this.supersede(client, memory.id, input.supersedes);
      return { memory: (await getMemory(client, memory.id))!, reinforced: false, scored };
    });
  }

  /** Refuses ids that name no live memory (a typo must not pass for a correction). */
  private async mustExist(db: Queryable, ids: readonly string[] | undefined, scopes: readonly string[] | undefined): Promise<void> {
    for (const id of ids ?? []) {
      const m = await getMemory(db, id);
      if (!m || (scopes && !scopes.includes(m.scope)))
        throw new UserError(`supersedes: no memory ${id}`, { param: "supersedes", code: "memory_not_found" });
    }
  }

  /** `newId` replaces `oldIds`: each old one's history says so, naming the new one. */
  private async supersede(db: Queryable, newId: string, oldIds: readonly string[]): Promise<void> {
    for (const old of await supersede(db, newId, oldIds)) await recordVersion(db, old, "supersession", "superseded", [newId]);
  }

  /**
   * Corrects a memory in place: a new version with the fields given (a new text is embedded and
   * indexed again), recorded in its history as by `by`; and, with `supersedes`, the memories it
   * replaces. Undefined when there is no such live memory.
   */
  async correct(
    id: string,
    fix: Correction,
    by: ChangedBy,
    signal?: AbortSignal,
    scopes?: readonly string[],
  ): Promise<MemoryRow | undefined> {
    storable({ content: fix.content, summary: fix.summary, tags: fix.tags });
    const before = await getMemory(this.deps.pool, id);
    if (!before || (scopes && !scopes.includes(before.scope))) return undefined;
    const content = fix.content ?? before.content;
    const summary = fix.summary === undefined ? before.summary : fix.summary;
    const textChanged = content !== before.content || summary !== before.summary;
    const [vector] = textChanged ? await this.deps.embedder.embed([summary ? `${summary}\n${content}` : content], signal) : [];
    return inTransaction(this.deps.pool, async (client) => {
      await lockForTransaction(client, AdvisoryLock.memoryStore);
      await this.mustExist(client, fix.supersedes, scopes);
      const current = await getMemory(client, id);
      if (!current) return undefined;
      await updateMemory(client, id, {
        content: fix.content,
        summary: fix.summary,
        tags: fix.tags,
        importance: fix.importance,
        embedding: vector ? { vector, embedder: this.deps.embedder.id } : undefined,
      });
      if (textChanged) await reindexMemory(client, current, { content, summary });
      await recordVersion(client, id, by, "corrected", fix.supersedes ?? []);
      if (fix.supersedes?.length) await this.supersede(client, id, fix.supersedes);
      return getMemory(client, id);
    });
  }

  /** Every version of a memory, oldest first; empty when there is none. */
  history(id: string): Promise<MemoryVersion[]> {
    return memoryHistory(this.deps.pool, id);
  }

  /** A stored memory that says the same thing as `m` (memory/same-thing.ts), among its nearest. */
  private async twinOf(db: Queryable, vector: readonly number[], m: Foldable, scope: string): Promise<MemoryRow | undefined> {
    // The same words in another conversation are as near as the twin: look past a few of them.
    for (const near of await nearestMemories(db, this.space, vector, 5)) {
      if (near.similarity < this.deps.settings.duplicateSimilarity) return undefined;
      const stored = await getMemory(db, near.id);
      // A replaced fact said again is said anew, not folded into the memory that lost.
      // Another scope's memory is not this scope's to reinforce.
      if (stored && !stored.superseded_at && stored.scope === scope && saySameThing(stored, m)) return stored;
    }
    return undefined;
  }

  /**
   * What Psyche remembers of the world about `query`: the `k` best memories, dreams left out.
   * A dream is not a memory of what happened (dream context never leaks into a chat, docs/dreams.md),
   * so everything that recalls (a turn's prompt, the memory tools, MCP,
   * assemble_context, a focused reflection) goes through here.
   */
  recall(query: string, k: number, { signal, ...narrowed }: RecallOptions = {}): Promise<Ranked<Candidate>[]> {
    return this.search(query, k, signal, { ...narrowed, exclude: NOT_RECALLED });
  }

  /**
   * The `k` best memories for `query` of any kind but those in `exclude` (the memory search API
   * shows everything, dreams included); each returned memory counts as recalled.
   */
  async search(query: string, k: number, signal?: AbortSignal, opts: SearchOptions = {}): Promise<Ranked<Candidate>[]> {
    const exclude = opts.exclude ?? [];
    const [vector] = await this.deps.embedder.embed([query], signal);
    const text = await bm25Matches(this.deps.pool, [...new Set(terms(query))], {
      limit: TEXT_CANDIDATES,
      perTerm: MATCHES_PER_TERM,
      ...BM25,
      exceptConversation: opts.exceptConversation,
    });
    const candidates = await memoryCandidates(this.deps.pool, this.space, {
      vector: vector!,
      text,
      limit: vectorCandidates(k),
      minSimilarity: this.deps.settings.rank.minSimilarity,
      includeSuperseded: opts.includeSuperseded ?? false,
      scopes: opts.scopes,
      exceptConversation: opts.exceptConversation,
    });
    const ranked = seatConversations(
      rankMemories(candidates, this.deps.settings.rank, opts.asOf).filter((r) => !exclude.includes(r.memory.kind)),
      k,
      opts.conversationSeats ?? this.deps.settings.rank.conversationSeats,
    )
      .slice(0, k)
      .filter((r) => !opts.floor || bearsOn(r, opts.floor));
    const rows = new Map(
      (
        await readRecalled(
          this.deps.pool,
          ranked.map((r) => r.memory.id),
        )
      ).map((m) => [m.id, m]),
    );
    return ranked.flatMap((r) => {
      const row = rows.get(r.memory.id);
      return row ? [{ ...r, memory: { ...row, ...r.memory } }] : [];
    });
  }

  /** Affect and significance of a text (in the scoring thread), without storing it. */
  score(text: string, toolCalls = 0): Promise<{ valence: number; arousal: number; importance: number }> {
    return this.deps.scorer.score({ text, toolCalls });
  }

  /** Significant insights and dreams from the last `hours` (background for a chat). */
  recentInsights(
    minImportance: number,
    hours: number,
    limit: number,
    kinds?: readonly MemoryKind[],
    scopes?: readonly string[],
  ): Promise<MemoryRow[]> {
    return recentInsights(this.deps.pool, minImportance, hours, limit, kinds, scopes);
  }

  /**
   * Puts memories stored before the full-text index existed into it, `batch` at a time (each
   * on its own: their conversation neighbours are not known). Returns how many.
   */
  async indexPending(batch = 500): Promise<number> {
    let done = 0;
    for (;;) {
      // Read under the store's lock: two processes (or a tick and start-up) index each once.
      const n = await inTransaction(this.deps.pool, async (client) => {
        await lockForTransaction(client, AdvisoryLock.memoryStore);
        const pending = await unindexedMemories(client, batch);
        await indexMemories(client, pending);
        return pending.length;
      });
      if (n === 0) return done;
      done += n;
    }
  }

  get(id: string): Promise<MemoryRow | undefined> {
    return getMemory(this.deps.pool, id);
  }

  /** Soft delete (gone from every search at once); with `purge`, the row is removed now too. */
  async forget(id: string, purge: boolean): Promise<{ deleted: boolean; purged: boolean }> {
    return inTransaction(this.deps.pool, async (client) => {
      const deleted = await softDeleteMemory(client, id);
      const purged = purge ? await purgeMemory(client, id) : false;
      return { deleted: deleted || purged, purged };
    });
  }
}

/** Refuses a NUL character in what a memory stores (db/nul.ts), naming the field, before anything is embedded or written. */
function storable(fields: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(fields))
    if (holdsNul(value))
      throw new UserError(`${field} contains a NUL character (\\u0000), which Psyche cannot store: remove it and send it again`, {
        param: field,
        code: "invalid_value",
      });
}

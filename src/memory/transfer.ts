// Memories out and in, as NDJSON a person can read: one memory a line, with its history, for a
// backup, a move to another machine or embedder, or seeding from notes (plain text lines). An
// import is idempotent by id, re-embeds with the current embedder, and keeps what each memory
// had (times, counts, history, supersession), so a round trip gives the same search results.
import { createHash } from "node:crypto";
import { z } from "zod";
import { inTransaction, type Pool } from "../db/pool.js";
import { holdsNul } from "../db/nul.js";
import { insertMemory, memoriesInOrder, memoryExists, type MemoryRow } from "../db/sql/memories.js";
import { insertVersions, memoryHistories, type MemoryVersion, recordFirstVersion } from "../db/sql/memory-versions.js";
import { latestInConversation } from "../db/sql/memory-terms.js";
import { AdvisoryLock, lockForTransaction } from "../db/sql/locks.js";
import { ConversationIdSchema } from "../conversation-id.js";
import { DEFAULT_SCOPE, ScopeSchema } from "../scope.js";
import { MAX_MEMORY_CHARS, type Memory } from "./memory.js";
import { memoryJson } from "./memory-json.js";
import { indexMemory } from "./text-index.js";

const uuid = z.string().uuid();
const date = z.coerce.date().refine((d) => !Number.isNaN(d.getTime()), "must be a date");

const VersionSchema = z.object({
  version: z.number().int().min(1),
  at: date,
  by: z.enum(["api", "mcp", "consolidation", "supersession", "import", "conversation", "turn", "dream", "tool", "ghap"]),
  change: z.enum(["created", "corrected", "reinforced", "folded", "folded_into", "superseded", "imported"]),
  content: z.string().min(1),
  summary: z.string().nullable().default(null),
  tags: z.array(z.string()).default([]),
  importance: z.number().min(0).max(1),
  related: z.array(uuid).default([]),
});

/** A memory as an export writes it (memory-json.ts) and an import takes it; unknown fields are ignored. */
export const ImportedMemorySchema = z.object({
  id: uuid.optional(),
  kind: z.enum(["episodic", "semantic", "dream", "insight"]).default("semantic"),
  content: z.string().trim().min(1, "must not be empty").max(MAX_MEMORY_CHARS),
  summary: z.string().trim().min(1).max(1000).nullable().optional(),
  tags: z.array(z.string().trim().min(1).max(64)).max(32).default([]),
  importance: z.number().min(0).max(1).optional(),
  valence: z.number().min(-1).max(1).optional(),
  arousal: z.number().min(-1).max(1).optional(),
  source: z
    .object({ kind: z.enum(["api", "conversation", "turn", "dream", "tool", "ghap"]), id: z.string().nullable().default(null) })
    .optional(),
  conversation_id: ConversationIdSchema.nullable().optional(),
  citations: z.array(uuid).max(64).default([]),
  scope: ScopeSchema.optional(),
  created_at: date.optional(),
  updated_at: date.optional(),
  last_accessed_at: date.optional(),
  access_count: z.number().int().min(0).optional(),
  reinforcements: z.number().int().min(0).optional(),
  version: z.number().int().min(1).optional(),
  supersedes: z.array(uuid).default([]),
  superseded_by: uuid.nullable().optional(),
  superseded_at: date.nullable().optional(),
  history: z.array(VersionSchema).max(10_000).optional(),
});
export type ImportedMemory = z.infer<typeof ImportedMemorySchema>;

/** One export line: the memory as the API shows it, its scope and history, and its vector when asked. */
export function exportLine(m: MemoryRow & { embedding?: string }, history: readonly MemoryVersion[]): string {
  const line: Record<string, unknown> = { ...memoryJson(m), history };
  if (m.embedding) line.embedding = { embedder: m.embedder, vector: JSON.parse(m.embedding) as number[] };
  return JSON.stringify(line);
}

/** Every live memory, oldest first, a line each (superseded ones included: they are history). */
export async function* exportMemories(
  pool: Pool,
  opts: { embeddings: boolean; pageSize?: number; scopes?: readonly string[] | null },
): AsyncGenerator<string> {
  let after: string | null = null;
  for (;;) {
    const page = await memoriesInOrder(pool, after, opts.pageSize ?? 200, opts.embeddings, opts.scopes ?? null);
    if (!page.length) return;
    const histories = await memoryHistories(
      pool,
      page.map((m) => m.id),
    );
    for (const m of page) yield exportLine(m, histories.get(m.id) ?? []);
    after = page.at(-1)!.id;
  }
}

export interface ImportReport {
  added: number;
  skipped: number;
  refused: { line: number; error: string }[];
}

/** A plain text line's id: the same text imported twice into one scope is one memory. */
export function textLineId(content: string, scope: string): string {
  const h = createHash("sha256").update(`psyche-import\n${scope}\n${content}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

type Parsed = { line: number; memory: ImportedMemory & { id: string } } | { line: number; error: string };

/** Postgres keeps no NUL character (db/nul.ts): such a line is refused, not failed in its batch's transaction. */
const NUL_REFUSED = "holds a NUL character (\\u0000), which Psyche cannot store";

/**
 * What a line is: a memory (a JSON object, or plain text), nothing (blank), or refused. A line
 * that starts as JSON is JSON: if it does not parse, or is not a memory, it is refused, never
 * stored as text.
 */
export function parseLine(text: string, line: number, scope = DEFAULT_SCOPE): Parsed | undefined {
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  if (!/^[[{]/.test(trimmed)) {
    const content = trimmed.slice(0, MAX_MEMORY_CHARS + 1);
    if (content.length > MAX_MEMORY_CHARS) return { line, error: `longer than ${MAX_MEMORY_CHARS} characters` };
    if (holdsNul(content)) return { line, error: NUL_REFUSED };
    return { line, memory: { ...ImportedMemorySchema.parse({ content }), id: textLineId(content, scope) } };
  }
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch (err) {
    return { line, error: `not valid JSON: ${(err as Error).message}` };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { line, error: "a JSON line must be an object (a memory)" };
  if (holdsNul(json)) return { line, error: NUL_REFUSED };
  const parsed = ImportedMemorySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { line, error: `not a memory: ${issue.path.join(".") || "(line)"}: ${issue.message}` };
  }
  return { line, memory: { ...parsed.data, id: parsed.data.id ?? textLineId(parsed.data.content, parsed.data.scope ?? scope) } };
}

/** Memories embedded and stored at once: one embedding call and one transaction. */
const BATCH = 64;

/**
 * Imports `lines` (the body of an import; `firstLine` is the first one's number in its file)
 * into their own scopes, or `scope` for lines that name none.
 * Each memory keeps its id, times, counts, supersession and history; one without a history gets
 * a first version by `import`. A memory whose id is stored already (deleted or not) is skipped.
 */
export async function importMemories(
  deps: { pool: Pool; memory: Memory },
  lines: readonly string[],
  opts: { firstLine?: number; scope?: string; allowed?: readonly string[] | null; signal?: AbortSignal } = {},
): Promise<ImportReport> {
  const { firstLine = 1, scope = DEFAULT_SCOPE, signal } = opts;
  // A line naming a scope its API key may not open is refused like any other bad line.
  const open = (p: Parsed): Parsed =>
    "memory" in p && opts.allowed && !opts.allowed.includes(p.memory.scope ?? scope)
      ? { line: p.line, error: `scope ${JSON.stringify(p.memory.scope)} is not open to this API key` }
      : p;
  const report: ImportReport = { added: 0, skipped: 0, refused: [] };
  const parsed = lines.flatMap((text, i) => {
    const p = parseLine(text, firstLine + i, scope);
    return p ? [open(p)] : [];
  });
  for (let i = 0; i < parsed.length; i += BATCH) {
    signal?.throwIfAborted();
    const batch: { line: number; memory: ImportedMemory & { id: string } }[] = [];
    for (const p of parsed.slice(i, i + BATCH)) {
      if ("error" in p) report.refused.push(p);
      else batch.push(p);
    }
    if (!batch.length) continue;
    const vectors = await deps.memory.embedder.embed(
      batch.map(({ memory: m }) => (m.summary ? `${m.summary}\n${m.content}` : m.content)),
      signal,
    );
    const scores = await Promise.all(
      batch.map(({ memory: m }) =>
        m.importance === undefined || m.valence === undefined || m.arousal === undefined ? deps.memory.score(m.content) : undefined,
      ),
    );
    await inTransaction(deps.pool, async (client) => {
      await lockForTransaction(client, AdvisoryLock.memoryStore);
      for (const [j, { memory: m }] of batch.entries()) {
        if (await memoryExists(client, m.id)) {
          report.skipped++;
          continue;
        }
        const score = scores[j];
        const neighbour = m.conversation_id ? await latestInConversation(client, m.conversation_id) : undefined;
        const row = await insertMemory(client, {
          kind: m.kind,
          content: m.content,
          summary: m.summary ?? null,
          tags: m.tags,
          importance: m.importance ?? score!.importance,
          valence: m.valence ?? score!.valence,
          arousal: m.arousal ?? score!.arousal,
          embedding: vectors[j]!,
          embedder: deps.memory.space.embedder,
          sourceKind: m.source?.kind ?? "api",
          sourceId: m.source?.id ?? null,
          conversationId: m.conversation_id ?? null,
          citations: m.citations,
          // A line's own scope wins; one without is the request's.
          scope: m.scope ?? scope,
          kept: {
            id: m.id,
            created_at: m.created_at,
            updated_at: m.updated_at ?? m.created_at,
            last_accessed_at: m.last_accessed_at,
            access_count: m.access_count,
            reinforcements: m.reinforcements,
            version: m.history?.length ? (m.version ?? Math.max(...m.history.map((v) => v.version))) : 1,
            supersedes: m.supersedes,
            superseded_by: m.superseded_by ?? null,
            superseded_at: m.superseded_by ? (m.superseded_at ?? new Date()) : null,
          },
        });
        await indexMemory(client, row, neighbour);
        if (m.history?.length) await insertVersions(client, row.id, m.history);
        else await recordFirstVersion(client, row.id, "import", "imported");
        report.added++;
      }
    });
  }
  return report;
}

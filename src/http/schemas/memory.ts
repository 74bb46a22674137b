import { z } from "zod";
import { ConversationIdSchema } from "../../conversation-id.js";
import { MAX_MEMORY_CHARS } from "../../memory/memory.js";

export const CreateMemorySchema = z.strictObject({
  content: z.string().trim().min(1, "must not be empty").max(MAX_MEMORY_CHARS),
  kind: z.enum(["episodic", "semantic", "dream", "insight"]).default("semantic"),
  summary: z.string().trim().min(1).max(1000).nullable().optional(),
  tags: z.array(z.string().trim().min(1).max(64)).max(32).default([]),
  /** Omitted: scored from the text (significance and novelty). */
  importance: z.number().min(0).max(1).optional(),
  citations: z.array(z.string().uuid()).max(64).default([]),
  /** The conversation it came from: its neighbours there lend it context in search. */
  conversation_id: ConversationIdSchema.optional(),
  /** Memories this one replaces: they leave default search, readable still with their history. */
  supersedes: z.array(z.string().uuid()).max(64).optional(),
});

/** PATCH /v1/memories/:id: at least one field; each given one is the new value. */
export const CorrectMemorySchema = z
  .strictObject({
    content: z.string().trim().min(1, "must not be empty").max(MAX_MEMORY_CHARS).optional(),
    summary: z.string().trim().min(1).max(1000).nullable().optional(),
    tags: z.array(z.string().trim().min(1).max(64)).max(32).optional(),
    importance: z.number().min(0).max(1).optional(),
    supersedes: z.array(z.string().uuid()).max(64).optional(),
  })
  .refine((v) => Object.values(v).some((x) => x !== undefined), {
    message: "give at least one of content, summary, tags, importance or supersedes",
  });

const booleanQuery = z.enum(["true", "false"]).transform((v) => v === "true");

export const SearchQuerySchema = z.object({
  q: z.string().trim().min(1, "must not be empty").max(4000),
  /** At most 50: the candidates are the 40 nearest vectors and the 40 best full-text matches. */
  k: z.coerce.number().int().min(1).max(50).default(10),
  /** Memories a newer one replaced are left out unless asked for. */
  include_superseded: booleanQuery.default(false),
});

/** GET /v1/memories/export. */
export const ExportQuerySchema = z.object({ embeddings: booleanQuery.default(false) });

/** POST /v1/memories/import: where the body's first line is in its file (the CLI sends a file in parts). */
export const ImportQuerySchema = z.object({ first_line: z.coerce.number().int().min(1).default(1) });

/** GET /v1/memories: the newest first. */
export const ListQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) });

export const MemoryIdSchema = z.string().uuid();

export const MoodQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(50),
});

export const EmbeddingsRequestSchema = z.object({
  input: z.union([z.string(), z.array(z.string()).min(1, "must not be empty").max(2048)]),
  model: z.string().min(1),
  encoding_format: z.enum(["float", "base64"]).default("float"),
  dimensions: z.number().int().positive().optional(),
  user: z.string().optional(),
});

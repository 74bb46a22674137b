// The memory API: store, search, read, forget, and what the store holds.
import { Hono } from "hono";
import type { Context } from "hono";
import type { z } from "zod";
import { latestRun } from "../../db/sql/embedding-runs.js";
import { memoryCounts, newestMemories, scopeOf } from "../../db/sql/memories.js";
import { keyScopes, namedScope, readableFor, requestScope } from "../request-scope.js";
import { memoryJson } from "../../memory/memory-json.js";
import { exportMemories, importMemories } from "../../memory/transfer.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { readJsonObject } from "../read-json.js";
import {
  CorrectMemorySchema,
  CreateMemorySchema,
  ExportQuerySchema,
  ImportQuerySchema,
  ListQuerySchema,
  MemoryIdSchema,
  SearchQuerySchema,
} from "../schemas/memory.js";

function parse<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

function memoryId(c: Context): string {
  const parsed = MemoryIdSchema.safeParse(c.req.param("id"));
  if (!parsed.success) throw invalidRequest("memory ids are UUIDs", "id", "invalid_value");
  return parsed.data;
}

const notFound = (id: string) => new ApiError(404, "not_found_error", `no memory ${id}`, { param: "id", code: "memory_not_found" });

export function memoryRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/v1/memories", async (c) => {
    const { conversation_id, ...body } = parse(CreateMemorySchema, await readJsonObject(c));
    const { memory, reinforced } = await deps.memory.remember({
      ...body,
      conversationId: conversation_id,
      sourceKind: "api",
      scope: requestScope(c),
      signal: c.req.raw.signal,
    });
    return c.json({ ...memoryJson(memory), reinforced }, reinforced ? 200 : 201);
  });

  /** The newest memories (their first 200 characters), for a glance; search finds the rest. */
  app.get("/v1/memories", async (c) => {
    const { limit } = parse(ListQuerySchema, c.req.query());
    return c.json({ object: "list", data: await newestMemories(deps.pool, limit, readableFor(c)) });
  });

  app.get("/v1/memories/search", async (c) => {
    const { q, k, include_superseded } = parse(SearchQuerySchema, c.req.query());
    const ranked = await deps.memory.search(q, k, c.req.raw.signal, {
      includeSuperseded: include_superseded,
      scopes: readableFor(c),
    });
    return c.json({
      object: "list",
      data: ranked.map((r) => ({
        ...memoryJson(r.memory),
        score: r.score,
        scores: { relevance: r.relevance, recency: r.recency, importance: r.importance, similarity: r.memory.similarity },
      })),
    });
  });

  app.get("/v1/memories/status", async (c) => {
    // The run first, the counts after: a run read as done then has all its vectors in the counts
    // (reading both at once, the counts could be from before its last batch was written).
    const run = await latestRun(deps.pool);
    const counts = await memoryCounts(deps.pool);
    return c.json({
      embedder: { id: deps.embedder.id, dimensions: deps.embedder.dimensions },
      memories: { live: counts.total, deleted_pending_purge: counts.deleted, by_embedder: counts.byEmbedder },
      reembedding: run ?? null,
    });
  });

  /** Every live memory as NDJSON, oldest first, with its history (memory/transfer.ts). */
  app.get("/v1/memories/export", (c) => {
    const { embeddings } = parse(ExportQuerySchema, c.req.query());
    // A backup: every scope unless the request names one (then that scope's own memories).
    const scope = namedScope(c);
    const lines = exportMemories(deps.pool, { embeddings, scopes: scope === undefined ? keyScopes(c) : [scope] });
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await lines.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`${next.value}\n`));
      },
      async cancel() {
        await lines.return(undefined);
      },
    });
    const day = new Date().toISOString().slice(0, 10);
    return new Response(body, {
      headers: {
        "content-type": "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="psyche-memories-${day}.ndjson"`,
      },
    });
  });

  /** NDJSON memories or plain text lines (within the body limit: `psyche memory import` sends a file in parts). */
  app.post("/v1/memories/import", async (c) => {
    const { first_line } = parse(ImportQuerySchema, c.req.query());
    const lines = (await c.req.text()).split(/\r?\n/);
    const report = await importMemories(deps, lines, {
      firstLine: first_line,
      scope: requestScope(c),
      allowed: keyScopes(c),
      signal: c.req.raw.signal,
    });
    return c.json({ object: "memory.import", ...report });
  });

  /** A memory the request's scope reads, or a 404 (another scope's memory is not there for it). */
  const readable = async (c: Context) => {
    const id = memoryId(c);
    const memory = await deps.memory.get(id);
    if (!memory || !readableFor(c).includes(memory.scope)) throw notFound(id);
    return memory;
  };

  app.get("/v1/memories/:id", async (c) => {
    const memory = await readable(c);
    return c.json(memoryJson(memory));
  });

  /** A correction: a new version of the memory, kept in its history. */
  app.patch("/v1/memories/:id", async (c) => {
    const id = memoryId(c);
    const fix = parse(CorrectMemorySchema, await readJsonObject(c));
    const memory = await deps.memory.correct(id, fix, "api", c.req.raw.signal, readableFor(c));
    if (!memory) throw notFound(id);
    return c.json(memoryJson(memory));
  });

  /** Every version, oldest first, with when and by what it changed; a deleted memory's until it is purged. */
  app.get("/v1/memories/:id/history", async (c) => {
    const id = memoryId(c);
    const scope = await scopeOf(deps.pool, id);
    const versions = scope !== undefined && readableFor(c).includes(scope) ? await deps.memory.history(id) : [];
    if (!versions.length) throw notFound(id);
    return c.json({ object: "list", memory_id: id, data: versions.map((v) => ({ object: "memory.version", ...v })) });
  });

  app.delete("/v1/memories/:id", async (c) => {
    const purgeParam = c.req.query("purge");
    if (purgeParam !== undefined && purgeParam !== "true" && purgeParam !== "false")
      throw invalidRequest("purge is true or false", "purge", "invalid_value");
    const id = (await readable(c)).id;
    const { deleted, purged } = await deps.memory.forget(id, purgeParam === "true");
    if (!deleted) throw notFound(id);
    return c.json({ id, object: "memory.deleted", deleted: true, purged });
  });

  return app;
}

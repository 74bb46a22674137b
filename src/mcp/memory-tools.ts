// MCP's memory tools: search, store, and assemble_context, the call a hook script makes on
// every prompt to put Psyche's relevant memories and insights into an agent's context.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { WebServices } from "../web-services.js";
import { ConversationIdSchema } from "../conversation-id.js";
import { MAX_MEMORY_CHARS } from "../memory/memory.js";
import { assembleContext, CONTEXT_TYPES } from "../memory/assemble-context.js";
import { ProjectSchema, SessionIdSchema } from "./agent-tools.js";
import { memoryJson } from "../memory/memory-json.js";
import { guarded, result } from "./result.js";
import { UserError } from "../errors.js";
import { projectScope, readableScopes, ScopeSchema } from "../scope.js";
import { EVERY_SCOPE, type McpScope, scopeFor } from "./scope-access.js";

const scopeArg = ScopeSchema.optional().describe(
  "The scope to read and write (a project, a person): its own memories and default's. Default: the request's X-Psyche-Scope, else default",
);

export function registerMemoryTools(server: McpServer, deps: WebServices, access: McpScope = EVERY_SCOPE): void {
  server.registerTool(
    "recall_memory",
    {
      title: "Recall memories",
      description:
        "Search Psyche's long-term memory: the memories most relevant to the query, ranked by relevance, recency and importance.",
      inputSchema: {
        query: z.string().trim().min(1).max(4000),
        k: z.number().int().min(1).max(50).default(5).describe("How many memories (default 5)"),
        scope: scopeArg,
      },
      annotations: { readOnlyHint: true },
    },
    guarded("recall_memory", deps.log, async ({ query, k, scope }, extra) => {
      // Dream text is not a memory of the world (memory/recall.ts).
      const ranked = await deps.memory.recall(query, k, {
        signal: extra.signal,
        scopes: readableScopes(scopeFor(access, scope)),
      });
      const memories = ranked.map((r) => ({ ...memoryJson(r.memory), score: r.score }));
      const text = memories.length
        ? memories.map((m) => `- ${m.content} (${m.kind}, importance ${m.importance.toFixed(2)}, id ${m.id})`).join("\n")
        : `Nothing in memory bears on "${query}".`;
      return result({ memories }, text);
    }),
  );

  server.registerTool(
    "store_memory",
    {
      title: "Store a memory",
      description:
        "Remember something for later. A near-duplicate of a stored memory reinforces it instead of adding another. Importance (0 to 1) is scored from the text when omitted.",
      inputSchema: {
        content: z.string().trim().min(1).max(MAX_MEMORY_CHARS),
        summary: z.string().trim().min(1).max(500).optional().describe("A line that says what it is about: searched with the content"),
        importance: z.number().min(0).max(1).optional(),
        kind: z.enum(["semantic", "episodic"]).default("semantic").describe("semantic: a fact; episodic: something that happened"),
        tags: z.array(z.string().trim().min(1).max(64)).max(32).default([]),
        conversation_id: ConversationIdSchema.optional().describe(
          "The conversation this came from, if any: its neighbours there lend it context in search",
        ),
        supersedes: z
          .array(z.string().uuid())
          .max(64)
          .optional()
          .describe("Ids of memories this one replaces (an old fact it corrects): they leave search and keep their history"),
        scope: scopeArg,
      },
    },
    guarded("store_memory", deps.log, async ({ conversation_id, scope, ...args }, extra) => {
      const { memory, reinforced } = await deps.memory.remember({
        ...args,
        conversationId: conversation_id,
        sourceKind: "api",
        by: "mcp",
        scope: scopeFor(access, scope),
        signal: extra.signal,
      });
      return result(
        { ...memoryJson(memory), reinforced },
        reinforced ? `Reinforced memory ${memory.id}, which already held this.` : `Stored memory ${memory.id}.`,
      );
    }),
  );

  server.registerTool(
    "correct_memory",
    {
      title: "Correct a memory",
      description:
        "Correct a stored memory in place: the fields given become its new version, and its history keeps every earlier one " +
        "(GET /v1/memories/{id}/history). supersedes names other memories the corrected one replaces: they leave search.",
      inputSchema: {
        id: z.string().uuid().describe("The memory to correct (recall_memory gives ids)"),
        content: z.string().trim().min(1).max(MAX_MEMORY_CHARS).optional(),
        importance: z.number().min(0).max(1).optional(),
        tags: z.array(z.string().trim().min(1).max(64)).max(32).optional(),
        supersedes: z.array(z.string().uuid()).max(64).optional(),
        scope: scopeArg,
      },
    },
    guarded("correct_memory", deps.log, async ({ id, scope, ...fix }, extra) => {
      if (Object.values(fix).every((v) => v === undefined))
        throw new UserError("give at least one of content, importance, tags or supersedes", { param: "content" });
      const memory = await deps.memory.correct(id, fix, "mcp", extra.signal, readableScopes(scopeFor(access, scope)));
      if (!memory) throw new UserError(`no memory ${id}`, { status: 404, param: "id", code: "memory_not_found" });
      return result(memoryJson(memory), `Corrected memory ${id}: now version ${memory.version}.`);
    }),
  );

  server.registerTool(
    "assemble_context",
    {
      title: "Assemble context for a prompt",
      description:
        "Markdown for an agent's prompt within max_tokens (estimated at 4 characters a token), in this order: the agent session's active GHAP, " +
        "the memories most relevant to the query, past experiences (resolved GHAPs) among them, and Psyche's recent insights. " +
        "context_types picks which (default all); empty markdown when nothing is relevant.",
      inputSchema: {
        query: z.string().max(20_000).describe("The prompt to find context for"),
        context_types: z
          .array(z.enum(CONTEXT_TYPES))
          .min(1)
          .optional()
          .describe("What to include: memories, experiences, insights, active_ghap (default all)"),
        max_tokens: z.number().int().min(1).max(32_000).default(1500),
        limit: z.number().int().min(1).max(50).default(10).describe("Memories considered before the budget cuts"),
        session_id: SessionIdSchema.optional().describe(
          "The agent session whose active GHAP to include (default: the latest open session)",
        ),
        project: ProjectSchema.optional().describe("Or: the latest open session of this project"),
        scope: scopeArg,
      },
      outputSchema: {
        markdown: z.string(),
        token_estimate: z.number(),
        token_count: z.number().describe("The signature table's name for token_estimate (the hooks answer with it too)"),
        memory_ids: z.array(z.string()),
        experience_ids: z.array(z.string()),
        insight_ids: z.array(z.string()),
        ghap_id: z.string().nullable(),
        truncated: z.boolean(),
      },
      annotations: { readOnlyHint: true },
    },
    guarded("assemble_context", deps.log, async ({ query, context_types, max_tokens, limit, session_id, project, scope }, extra) => {
      const types = context_types ?? CONTEXT_TYPES;
      // No open session is no GHAP, not an error: the rest of the context still helps (a session named but unknown is).
      const wanted = types.includes("active_ghap");
      const session =
        wanted && session_id
          ? await deps.agents.session({ session_id })
          : wanted
            ? await deps.agents.session({ project }).catch(() => undefined)
            : undefined;
      const activeGhap = session ? await deps.agents.active(session) : undefined;
      // A named project (or agent session) reads the project's memories, as its hooks do.
      const sessionScope = async () =>
        project
          ? projectScope(project)
          : session_id
            ? projectScope((session ?? (await deps.agents.session({ session_id }))).project)
            : undefined;
      const assembled = await assembleContext(deps.memory, {
        query,
        types,
        maxTokens: max_tokens,
        limit,
        activeGhap,
        signal: extra.signal,
        scopes: readableScopes(scopeFor(access, scope ?? (await sessionScope()))),
      });
      return result({ ...assembled, token_count: assembled.token_estimate }, assembled.markdown);
    }),
  );
}

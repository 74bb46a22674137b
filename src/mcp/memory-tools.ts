// MCP's memory tools: search, store, and assemble_context, the call a hook script makes on
// every prompt to put Psyche's relevant memories and insights into an agent's context.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { WebServices } from "../web-services.js";
import { ConversationIdSchema } from "../conversation-id.js";
import { MAX_MEMORY_CHARS } from "../memory/memory.js";
import { assembleContext } from "../memory/assemble-context.js";
import { memoryJson } from "../memory/memory-json.js";
import { guarded, result } from "./result.js";

export function registerMemoryTools(server: McpServer, deps: WebServices): void {
  server.registerTool(
    "recall_memory",
    {
      title: "Recall memories",
      description: "Search Psyche's long-term memory: the memories most relevant to the query, ranked by relevance, recency and importance.",
      inputSchema: {
        query: z.string().trim().min(1).max(4000),
        k: z.number().int().min(1).max(50).default(5).describe("How many memories (default 5)"),
      },
      annotations: { readOnlyHint: true },
    },
    guarded("recall_memory", deps.log, async ({ query, k }, extra) => {
      // Dream text is not a memory of the world (memory/recall.ts).
      const ranked = await deps.memory.recall(query, k, extra.signal);
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
        importance: z.number().min(0).max(1).optional(),
        kind: z.enum(["semantic", "episodic"]).default("semantic").describe("semantic: a fact; episodic: something that happened"),
        tags: z.array(z.string().trim().min(1).max(64)).max(32).default([]),
        conversation_id: ConversationIdSchema.optional().describe("The conversation this came from, if any: its neighbours there lend it context in search"),
      },
    },
    guarded("store_memory", deps.log, async ({ conversation_id, ...args }, extra) => {
      const { memory, reinforced } = await deps.memory.remember({ ...args, conversationId: conversation_id, sourceKind: "api", signal: extra.signal });
      return result(
        { ...memoryJson(memory), reinforced },
        reinforced ? `Reinforced memory ${memory.id}, which already held this.` : `Stored memory ${memory.id}.`,
      );
    }),
  );

  server.registerTool(
    "assemble_context",
    {
      title: "Assemble context for a prompt",
      description:
        "Markdown of the memories most relevant to the query and Psyche's recent insights, within max_tokens (estimated at 4 characters a token). " +
        "For hook scripts that put context into an agent's prompt; empty markdown when nothing is relevant.",
      inputSchema: {
        query: z.string().max(20_000).describe("The prompt to find context for"),
        max_tokens: z.number().int().min(1).max(32_000).default(1500),
        limit: z.number().int().min(1).max(50).default(10).describe("Memories considered before the budget cuts"),
      },
      outputSchema: {
        markdown: z.string(),
        token_estimate: z.number(),
        memory_ids: z.array(z.string()),
        insight_ids: z.array(z.string()),
        truncated: z.boolean(),
      },
      annotations: { readOnlyHint: true },
    },
    guarded("assemble_context", deps.log, async ({ query, max_tokens, limit }, extra) => {
      const assembled = await assembleContext(deps.memory, { query, maxTokens: max_tokens, limit, signal: extra.signal });
      return result({ ...assembled }, assembled.markdown);
    }),
  );
}

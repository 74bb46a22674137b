// MCP resources: journal entries (psyche://dreams/{id}) and memories (psyche://memories/{id}),
// each as JSON, listing the newest; and the latest events (psyche://events).
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { getDream, recentDreams } from "../db/sql/dreams.js";
import { newestMemories } from "../db/sql/memories.js";
import { DEFAULT_SCOPE, readableScopes } from "../scope.js";
import { eventIdBefore, eventsAfter } from "../db/sql/events.js";
import type { WebServices } from "../web-services.js";
import { memoryJson } from "../memory/memory-json.js";

/** MCP's code for a resource that does not exist (the specification's -32002). */
const RESOURCE_NOT_FOUND = -32002;
const LISTED = 50;

const oneLine = (text: string, max = 80) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function idOf(variables: Record<string, string | string[]>, what: string): string {
  const raw = variables["id"];
  const id = Array.isArray(raw) ? raw[0] : raw;
  if (!z.uuid().safeParse(id).success) throw new McpError(ErrorCode.InvalidParams, `${what} ids are UUIDs, not '${String(id)}'`);
  return id!;
}

export function registerResources(server: McpServer, deps: WebServices, scope: string = DEFAULT_SCOPE): void {
  server.registerResource(
    "dream",
    new ResourceTemplate("psyche://dreams/{id}", {
      list: async () => ({
        resources: (await recentDreams(deps.pool, { limit: LISTED })).map((d) => ({
          uri: `psyche://dreams/${d.id}`,
          name: `${d.kind} ${d.started_at.toISOString().slice(0, 16)}: ${oneLine(d.content) || d.status}`,
          mimeType: "application/json",
        })),
      }),
    }),
    {
      title: "Dream journal entry",
      description: "A dream, reflection, idle thought or consolidation, with its text",
      mimeType: "application/json",
    },
    async (uri, variables) => {
      const id = idOf(variables, "Journal entry");
      const dream = await getDream(deps.pool, id);
      if (!dream) throw new McpError(RESOURCE_NOT_FOUND, `No journal entry ${id}`, { uri: uri.href });
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(dream, null, 2) }] };
    },
  );

  server.registerResource(
    "memory",
    new ResourceTemplate("psyche://memories/{id}", {
      list: async () => ({
        resources: (await newestMemories(deps.pool, LISTED, readableScopes(scope))).map((m) => ({
          uri: `psyche://memories/${m.id}`,
          name: `${m.kind}: ${oneLine(m.content)}`,
          mimeType: "application/json",
        })),
      }),
    }),
    { title: "Memory", description: "One of Psyche's long-term memories", mimeType: "application/json" },
    async (uri, variables) => {
      const id = idOf(variables, "Memory");
      const memory = await deps.memory.get(id);
      if (!memory || !readableScopes(scope).includes(memory.scope))
        throw new McpError(RESOURCE_NOT_FOUND, `No memory ${id}`, { uri: uri.href });
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(memoryJson(memory), null, 2) }] };
    },
  );

  // The event log (GET /v1/events) as a resource: the latest events, oldest first. The HTTP
  // endpoint is stateless (mcp/http-route.ts) and cannot push; `psyche mcp` (stdio) takes
  // subscriptions to it itself (mcp/stdio-bridge.ts), and an HTTP client follows GET
  // /v1/events from `last_id`.
  server.registerResource(
    "events",
    "psyche://events",
    {
      title: "Events",
      description: "The latest dream states, reveries, memories, mood changes and comings (GET /v1/events streams them)",
      mimeType: "application/json",
    },
    async (uri) => {
      const events = await eventsAfter(deps.pool, await eventIdBefore(deps.pool, LISTED), LISTED);
      const body = { last_id: events.at(-1)?.id ?? null, stream: "GET /v1/events (Last-Event-ID: last_id)", data: events };
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(body, null, 2) }] };
    },
  );
}

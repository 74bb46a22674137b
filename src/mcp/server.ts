// Psyche as an MCP server: its tools and resources over the dependencies a web process has.
// Stateless: one is made per HTTP request, so any web process can answer any client.
import { DEFAULT_SCOPE } from "../scope.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { WebServices } from "../web-services.js";
import { PSYCHE_VERSION } from "../version.js";
import { registerAgentTools } from "./agent-tools.js";
import { registerChatTools } from "./chat-tools.js";
import { registerMemoryTools } from "./memory-tools.js";
import { registerResources } from "./resources.js";
import { registerStateTools } from "./state-tools.js";

export const MCP_INSTRUCTIONS =
  "Psyche is a companion model with a long-term memory, a mood, and a dream life. " +
  "Use chat to talk to it, recall_memory and store_memory for its memory, and assemble_context to get markdown context for a prompt. " +
  "Coding agents: start_session, then set_ghap (goal, hypothesis, action, prediction) for the work at hand and resolve_ghap when it is confirmed, falsified or abandoned.";

/**
 * A server for one request: `scope` is the one the request names (X-Psyche-Scope, ?scope=, or
 * its key's first); `keyScopes` what its API key may open (null: every scope). A key bound to
 * scopes gets only the tools that keep scopes apart: chat and memory.
 */
export function createMcpServer(
  deps: WebServices,
  access: { scope: string; keyScopes: readonly string[] | null } = { scope: DEFAULT_SCOPE, keyScopes: null },
): McpServer {
  const server = new McpServer(
    { name: "psyche", title: "Psyche", version: PSYCHE_VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: MCP_INSTRUCTIONS },
  );
  const scoped = { scope: access.scope, allowed: access.keyScopes };
  registerChatTools(server, deps, scoped);
  registerMemoryTools(server, deps, scoped);
  if (access.keyScopes) return server;
  registerStateTools(server, deps);
  registerAgentTools(server, deps);
  registerResources(server, deps, access.scope);
  return server;
}

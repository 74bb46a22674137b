// Streamable HTTP at /mcp, stateless: each POST gets its own MCP server over the web
// process's shared dependencies, so any web process can answer any request and nothing is
// kept between them. Replies are JSON (no server-initiated messages to stream), so a hook
// script can use plain curl. GET (a server-to-client stream) and DELETE (ending a session)
// have nothing to do without sessions: 405. The older HTTP+SSE transport (GET /sse, POST
// /messages) is beside it, with sessions of its own (legacy-sse.ts).
import { DEFAULT_SCOPE, scopeNamed } from "../scope.js";
import { presentedKey } from "../api-keys.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { type Context, Hono } from "hono";
import type { WebServices } from "../web-services.js";
import { originAllowed } from "./origin.js";
import { createMcpServer } from "./server.js";
import { legacySessions } from "./legacy-sse.js";

/** A JSON-RPC error as the MCP transport writes them (no request id is known). */
const rpcError = (
  c: Context,
  status: 400 | 401 | 403 | 404 | 405 | 413,
  code: number,
  message: string,
  headers: Record<string, string> = {},
) => c.json({ jsonrpc: "2.0", error: { code, message }, id: null }, status, headers);

/** The transport insists on both; a client that asks for anything (curl's default) gets JSON. */
function withAccept(req: Request): Request {
  const accept = req.headers.get("accept");
  if (accept && !/^\s*\*\/\*\s*$/.test(accept)) return req;
  const headers = new Headers(req.headers);
  headers.set("accept", "application/json, text/event-stream");
  return new Request(req, { headers });
}

export function mcpRoutes(deps: WebServices): Hono {
  const app = new Hono();

  const guard = async (c: Context, next: () => Promise<void>) => {
    const origin = c.req.header("origin");
    if (!originAllowed(origin, deps.mcpAllowedOrigins)) {
      deps.log.warn({ origin }, "refused an MCP request from a foreign origin");
      return rpcError(
        c,
        403,
        -32000,
        `Forbidden: origin ${origin} may not use this server (PSYCHE_MCP_ALLOWED_ORIGINS lists extra origins)`,
      );
    }
    if (deps.apiKeys.length) {
      const key = presentedKey(deps.apiKeys, c.req.header("authorization"), c.req.header("x-api-key"));
      if (!key)
        return rpcError(c, 401, -32001, "Missing or wrong API key: send Authorization: Bearer <PSYCHE_API_KEY>", {
          "WWW-Authenticate": "Bearer",
        });
      c.set("keyScopes", key.scopes);
    }
    await next();
  };
  for (const path of ["/mcp", "/sse", "/messages"]) app.use(path, guard);

  /** The scope a request asks for, within its key's; a JSON-RPC error response otherwise. */
  const scopeOf = (c: Context): { scope: string; keyScopes: readonly string[] | null } | Response => {
    const keyScopes = c.get("keyScopes") ?? null;
    let scope: string;
    try {
      scope = scopeNamed(c.req.header("x-psyche-scope"), c.req.query("scope")) ?? keyScopes?.[0] ?? DEFAULT_SCOPE;
    } catch (err) {
      return rpcError(c, 400, -32602, (err as Error).message);
    }
    if (keyScopes && !keyScopes.includes(scope))
      return rpcError(c, 403, -32000, `this API key is bound to the scopes ${keyScopes.join(", ")}, not ${JSON.stringify(scope)}`);
    return { scope, keyScopes };
  };

  app.post("/mcp", async (c) => {
    const asked = scopeOf(c);
    if (asked instanceof Response) return asked;
    const server = createMcpServer(deps, asked);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: deps.bodyLimit,
    });
    transport.onerror = (err) => deps.log.debug({ err }, "MCP transport refused a request");
    await server.connect(transport);
    try {
      return await transport.handleRequest(withAccept(c.req.raw));
    } finally {
      await server.close();
    }
  });

  const noSessions = (c: Context) =>
    rpcError(c, 405, -32000, "Method not allowed: this MCP endpoint is stateless; send each request as a POST", { Allow: "POST" });
  app.get("/mcp", noSessions);
  app.delete("/mcp", noSessions);

  // The older HTTP+SSE transport (legacy-sse.ts): a session per open stream.
  const legacy = legacySessions();
  app.get("/sse", (c) => {
    const asked = scopeOf(c);
    if (asked instanceof Response) return asked;
    return legacy.open(c, async (transport) => {
      const server = createMcpServer(deps, asked);
      await server.connect(transport);
      return server;
    });
  });
  app.post("/messages", async (c) => {
    const transport = legacy.get(c.req.query("sessionId") ?? "");
    if (!transport) return rpcError(c, 404, -32001, "No such session: open one with GET /sse, then POST to the endpoint it names");
    const text = await c.req.text();
    if (text.length > deps.bodyLimit) return rpcError(c, 413, -32000, `The message is over ${deps.bodyLimit} bytes`);
    try {
      transport.receive(JSON.parse(text));
    } catch (err) {
      return rpcError(c, 400, -32700, `Not a JSON-RPC message: ${(err as Error).message.slice(0, 200)}`);
    }
    return c.text("Accepted", 202);
  });
  return app;
}

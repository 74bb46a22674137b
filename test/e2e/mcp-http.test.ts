/* eslint-disable @typescript-eslint/no-explicit-any -- JSON-RPC bodies of raw fetch responses */
// MCP over Streamable HTTP at /mcp on a real server: the SDK's client, a hook script's plain
// POST, DNS-rebinding protection (Origin), the API key, and what a stateless endpoint refuses;
// and the older HTTP+SSE transport through the SDK's own client for it.
import t from "tap";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startPsyche } from "../helpers/psyche.js";

const API_KEY = "test-key-12345";
const psyche = await startPsyche(t, {
  recallPromptTokens: 0,
  maxTokens: 32,
  apiKey: API_KEY,
  mcpAllowedOrigins: "https://app.example.com",
});
const auth = { authorization: `Bearer ${API_KEY}` };

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: "psyche-e2e", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${psyche.url}/mcp`), { requestInit: { headers } }));
  return client;
}

const rpc = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${psyche.url}/mcp`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

t.test("the SDK client: initialize, list, call over HTTP", async (t) => {
  const client = await connect(auth);
  t.teardown(() => client.close());
  t.equal(client.getServerVersion()?.name, "psyche");
  t.match(client.getInstructions(), /assemble_context/);
  const { tools } = await client.listTools();
  t.equal(tools.length, 21);
  const stored = (await client.callTool({
    name: "store_memory",
    arguments: { content: "The user's build runs on a Raspberry Pi cluster" },
  })) as CallToolResult;
  t.notOk(stored.isError);
  const chat = (await client.callTool({ name: "chat", arguments: { message: "hello over MCP", max_tokens: 6 } })) as CallToolResult;
  t.notOk(chat.isError);
  t.match(chat.structuredContent, { finish_reason: "length", usage: { completion_tokens: 6 } });
  const context = (await client.callTool({
    name: "assemble_context",
    arguments: { query: "what does the build run on?", max_tokens: 200 },
  })) as CallToolResult;
  t.match((context.structuredContent as any).markdown, /Raspberry Pi cluster/);
  const bad = (await client.callTool({ name: "recall_memory", arguments: { query: 42 } })) as CallToolResult;
  t.equal(bad.isError, true, "bad arguments are a result the model reads, not a transport error");
});

// Before the tests that leave the client's pooled connections closed by the server (a refused
// body): the event stream's GET would be sent on one of them.
t.test("the older HTTP+SSE transport: GET /sse, then POST /messages, for clients that still speak it", async (t) => {
  const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
  const client = new Client({ name: "psyche-e2e-legacy", version: "0" });
  await client.connect(new SSEClientTransport(new URL(`${psyche.url}/sse`), { requestInit: { headers: auth } }));
  t.teardown(() => client.close());
  t.equal(client.getServerVersion()?.name, "psyche");
  const { tools } = await client.listTools();
  t.equal(tools.length, 21, "the same tools as /mcp");
  const stored = (await client.callTool({
    name: "store_memory",
    arguments: { content: "The legacy client's greenhouse has forty tomato plants" },
  })) as CallToolResult;
  t.notOk(stored.isError, JSON.stringify(stored.content));
  const recalled = (await client.callTool({
    name: "recall_memory",
    arguments: { query: "tomato plants in the greenhouse" },
  })) as CallToolResult;
  t.match(JSON.stringify(recalled.structuredContent), /forty tomato plants/, "answered on the stream");

  const noKey = await fetch(`${psyche.url}/sse`);
  t.equal(noKey.status, 401, "the API key is asked for on the stream");
  await noKey.body?.cancel();
  const post = (sessionId: string, body: string) =>
    fetch(`${psyche.url}/messages?sessionId=${sessionId}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body,
    });
  const unknown = await post("00000000-0000-4000-8000-000000000000", JSON.stringify({ jsonrpc: "2.0", method: "ping", id: 1 }));
  t.equal(unknown.status, 404);
  t.match(await unknown.json(), { error: { message: /No such session: open one with GET \/sse/ } });
  const sessionId = (client.transport as unknown as { _endpoint?: URL })._endpoint?.searchParams.get("sessionId") ?? "";
  t.ok(sessionId, "the endpoint event named the session");
  const bad = await post(sessionId, "{ not json");
  t.equal(bad.status, 400);
  const notRpc = await post(sessionId, JSON.stringify({ hello: "world" }));
  t.equal(notRpc.status, 400, "JSON that is no JSON-RPC message");
});

t.test("stateless: a hook script's single POST, no initialize, curl's Accept", async (t) => {
  const res = await rpc(
    {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "assemble_context", arguments: { query: "Raspberry Pi", max_tokens: 100 } },
    },
    { ...auth, accept: "*/*" },
  );
  t.equal(res.status, 200);
  t.match(res.headers.get("content-type"), /application\/json/);
  const body = (await res.json()) as any;
  t.equal(body.id, 7);
  t.match(body.result.structuredContent.markdown, /Raspberry Pi cluster/);
  t.equal(res.headers.get("mcp-session-id"), null, "no session is made");
  // Any web process could answer the next one: nothing of this request is kept.
  const again = (await (await rpc({ jsonrpc: "2.0", id: 8, method: "tools/list" }, auth)).json()) as any;
  t.equal(again.result.tools.length, 21);
});

t.test("Origin: foreign pages get 403, loopback and configured ones and none pass", async (t) => {
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  for (const origin of ["http://evil.example", `http://evil.example:${psyche.port}`, "null"]) {
    const res = await rpc(list, { ...auth, origin });
    t.equal(res.status, 403, origin);
    t.match(await res.json(), { jsonrpc: "2.0", error: { message: /origin/ } });
  }
  for (const origin of [`http://localhost:${psyche.port}`, "http://127.0.0.1:6274", "https://app.example.com"]) {
    t.equal((await rpc(list, { ...auth, origin })).status, 200, origin);
  }
  t.equal((await rpc(list, auth)).status, 200, "no Origin: a command-line client");
  await t.rejects(connect({ ...auth, origin: "http://evil.example" }), "the SDK client from a foreign origin cannot connect");
});

t.test("the API key guards /mcp too", async (t) => {
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  const none = await rpc(list);
  t.equal(none.status, 401);
  t.equal(none.headers.get("www-authenticate"), "Bearer");
  t.match(await none.json(), { error: { message: /API key/ } });
  t.equal((await rpc(list, { authorization: "Bearer wrong-key-000" })).status, 401);
  await t.rejects(connect({}), "the SDK client without the key cannot connect");
});

t.test("what a stateless endpoint refuses, and bad JSON-RPC", async (t) => {
  const get = await fetch(`${psyche.url}/mcp`, { headers: { ...auth, accept: "text/event-stream" } });
  t.equal(get.status, 405);
  t.equal(get.headers.get("allow"), "POST");
  t.equal((await fetch(`${psyche.url}/mcp`, { method: "DELETE", headers: auth })).status, 405);
  const garbage = await fetch(`${psyche.url}/mcp`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: "{not json",
  });
  t.equal(garbage.status, 400);
  t.match(await garbage.json(), { jsonrpc: "2.0", error: { code: -32700 } });
  const unknownMethod = (await (await rpc({ jsonrpc: "2.0", id: 3, method: "no/such" }, auth)).json()) as any;
  t.match(unknownMethod, { id: 3, error: { code: -32601 } });
  const before = (await psyche.db.pool.query("select count(*)::int as n from memories")).rows[0].n;
  const huge = await rpc(
    { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "store_memory", arguments: { content: "x".repeat(1_100_000) } } },
    auth,
  );
  t.equal(huge.status, 413, "a body over --body-limit");
  t.match(await huge.json(), { jsonrpc: "2.0", error: {} });
  t.equal((await psyche.db.pool.query("select count(*)::int as n from memories")).rows[0].n, before, "and nothing stored");
});

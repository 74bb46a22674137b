/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Scopes keep memories apart, end to end: a request in a scope (X-Psyche-Scope or ?scope=) reads
// its own memories and default's, never another scope's, through the memory API, MCP (the
// header, or a tool's scope argument), a coding agent's hooks (the project's path) and a chat's
// turns (the conversation's scope); export and import carry the scope.
import t from "tap";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 8 });

const api = async (method: string, path: string, body?: unknown, scope?: string) => {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (scope !== undefined) headers["x-psyche-scope"] = scope;
  const res = await fetch(`${psyche.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (/application\/json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : text) as any };
};
const store = async (content: string, scope?: string) => (await api("POST", "/v1/memories", { content }, scope)).body;
const searchIds = async (q: string, scope?: string) =>
  ((await api("GET", `/v1/memories/search?q=${encodeURIComponent(q)}&k=20`, undefined, scope)).body.data as any[]).map((m) => m.id);

const A = "/home/u/projects/alpha";
const B = "/home/u/projects/beta";
const shared = await store("The team's coding style prefers tabs over spaces");
const alpha = await store("The alpha project deploys with tabs open on the staging dashboard", A);
const beta = (await api("POST", `/v1/memories?scope=${encodeURIComponent(B)}`, { content: "The beta project uses tabs in its Makefile" }))
  .body;

t.test("the memory API: a scope reads its own and default's, never another's", async (t) => {
  t.equal(shared.scope, "default");
  t.equal(alpha.scope, A);
  t.equal(beta.scope, B, "?scope= names it too");
  const fromA = await searchIds("tabs", A);
  t.ok(fromA.includes(alpha.id) && fromA.includes(shared.id));
  t.notOk(fromA.includes(beta.id), "alpha never sees beta's");
  const fromB = await searchIds("tabs", B);
  t.ok(fromB.includes(beta.id) && fromB.includes(shared.id));
  t.notOk(fromB.includes(alpha.id));
  t.same(await searchIds("tabs"), [shared.id], "default reads default only");

  for (const [method, path, body] of [
    ["GET", `/v1/memories/${beta.id}`, undefined],
    ["GET", `/v1/memories/${beta.id}/history`, undefined],
    ["PATCH", `/v1/memories/${beta.id}`, { content: "rewritten from alpha" }],
    ["DELETE", `/v1/memories/${beta.id}`, undefined],
  ] as const) {
    const res = await api(method, path, body, A);
    t.equal(res.status, 404, `${method} ${path} from alpha`);
  }
  const still = await api("GET", `/v1/memories/${beta.id}`, undefined, B);
  t.match(still.body, { content: "The beta project uses tabs in its Makefile", version: 1 }, "unchanged, not deleted");
  const across = await api("POST", "/v1/memories", { content: "alpha replaces beta's fact", supersedes: [beta.id] }, A);
  t.equal(across.status, 400, "nor can it supersede another scope's memory");
  const listed = (await api("GET", "/v1/memories?limit=100", undefined, A)).body.data.map((m: any) => m.id);
  t.ok(listed.includes(alpha.id));
  t.notOk(listed.includes(beta.id));
  // The same words in two scopes are two memories: neither reinforces the other's.
  const twin = await api("POST", "/v1/memories", { content: "The beta project uses tabs in its Makefile" }, A);
  t.equal(twin.status, 201);
  t.equal(twin.body.scope, A);
  t.equal((await api("DELETE", `/v1/memories/${twin.body.id}`, undefined, A)).status, 200);
});

t.test("bad scopes are refused in OpenAI's shape", async (t) => {
  for (const bad of ["%01bad", "x".repeat(257), "%20%20"]) {
    const res = await api("GET", `/v1/memories/search?q=tabs&scope=${bad}`);
    t.equal(res.status, 400, bad.slice(0, 20));
    t.match(res.body.error, { param: "scope", message: /scope/ });
  }
});

t.test("MCP: the request's header, or a tool's scope argument", async (t) => {
  const connect = async (headers: Record<string, string>) => {
    const client = new Client({ name: "psyche-e2e", version: "0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${psyche.url}/mcp`), { requestInit: { headers } }));
    t.teardown(() => client.close());
    return client;
  };
  const inA = await connect({ "x-psyche-scope": A });
  const recalled = async (client: Client, args: Record<string, unknown>) =>
    ((await client.callTool({ name: "recall_memory", arguments: { query: "tabs", k: 20, ...args } })) as CallToolResult)
      .structuredContent as any;
  const ids = (r: any) => r.memories.map((m: any) => m.id);
  t.notOk(ids(await recalled(inA, {})).includes(beta.id), "the header's scope");
  t.ok(ids(await recalled(inA, {})).includes(alpha.id));
  const plain = await connect({});
  t.ok(ids(await recalled(plain, { scope: B })).includes(beta.id), "a tool's scope argument");
  t.notOk(ids(await recalled(plain, { scope: B })).includes(alpha.id));
  const stored = (await inA.callTool({ name: "store_memory", arguments: { content: "Alpha's CI needs Node 20" } })) as CallToolResult;
  t.equal((stored.structuredContent as any).scope, A);
  const context = (await inA.callTool({
    name: "assemble_context",
    arguments: { query: "tabs Makefile", max_tokens: 500 },
  })) as CallToolResult;
  t.notOk((context.structuredContent as any).memory_ids.includes(beta.id), "assemble_context stays in the scope");
  const notThere = (await inA.callTool({ name: "correct_memory", arguments: { id: beta.id, content: "x" } })) as CallToolResult;
  t.equal(notThere.isError, true);
});

t.test("hooks: a coding agent's project path is its scope", async (t) => {
  const hook = async (cwd: string) =>
    (
      await api(
        "POST",
        "/hooks/user-prompt-submit?format=typed",
        JSON.stringify({ session_id: `s-${cwd.length}`, cwd, hook_event_name: "UserPromptSubmit", prompt: "how do we use tabs?" }),
      )
    ).body;
  const inBeta = await hook(B);
  t.match(inBeta.content, /beta project uses tabs/);
  t.notMatch(inBeta.content, /alpha project/, "beta's session never gets alpha's memories");
  const inAlpha = await hook(A);
  t.match(inAlpha.content, /alpha project/);
  t.notMatch(inAlpha.content, /beta project/);
});

t.test("a chat's turns: the conversation is in the request's scope, and so is its memory", async (t) => {
  const chat = (scope: string, conversation: string) =>
    fetch(`${psyche.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-psyche-scope": scope, "x-psyche-conversation": conversation },
      body: JSON.stringify({
        model: "psyche",
        messages: [{ role: "user", content: "Remember the beta release is on Tuesday" }],
        max_tokens: 4,
      }),
    });
  const res = await chat(B, "scoped-chat-1");
  t.equal(res.status, 200);
  const turnId = res.headers.get("x-psyche-turn");
  const memory = await until(
    "the turn's memory",
    async () => (await psyche.db.pool.query("select scope from memories where source_kind = 'turn' and source_id = $1", [turnId])).rows[0],
  );
  t.equal(memory.scope, B, "stored in the conversation's scope");
  const conv = (await psyche.db.pool.query("select scope from conversations where id = 'scoped-chat-1'")).rows[0];
  t.equal(conv.scope, B);
  const other = await chat(A, "scoped-chat-1");
  t.equal(other.status, 404, "another scope's conversation is not there");
  t.match(((await other.json()) as any).error, { code: "conversation_not_found" });
});

t.test("export and import carry the scope", async (t) => {
  const all = (await api("GET", "/v1/memories/export")).body as string;
  const lines = all
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  t.ok(lines.some((m) => m.scope === A) && lines.some((m) => m.scope === B), "a backup holds every scope");
  const onlyA = ((await api("GET", "/v1/memories/export", undefined, A)).body as string)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  t.ok(onlyA.length > 0);
  t.ok(
    onlyA.every((m) => m.scope === A),
    "a named scope exports its own",
  );
  const imported = await api(
    "POST",
    "/v1/memories/import",
    "A note for gamma\n" + JSON.stringify({ content: "Beta's note", scope: B }),
    "/gamma",
  );
  t.match(imported.body, { added: 2 });
  const gamma = await searchIds("note gamma", "/gamma");
  t.equal(gamma.length, 1, "a plain line goes to the request's scope");
  t.ok((await searchIds("Beta's note", B)).length > 0, "a line's own scope wins");
});

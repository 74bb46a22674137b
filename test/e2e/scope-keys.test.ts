/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// API keys bound to scopes (--api-keys "KEY=scope ..."): two projects, a key each, and an admin
// key that opens every scope. No route gives one project's key the other's memories: the memory
// API, export and import, chat and its turns and responses, MCP, hooks, the event stream, the
// dream journal, state and jobs; the server's settings are the admin's, and /health without a
// key says only how the server is.
import t from "tap";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startPsyche } from "../helpers/psyche.js";

const ADMIN = "admin-key-0000";
const ALPHA = "alpha-key-1111";
const BETA = "beta-key-2222";
const A = "/p/alpha";
const B = "/p/beta";
const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 8, apiKey: ADMIN, apiKeys: `${ALPHA}=${A} ${BETA}=${B}` });

const call = async (key: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${psyche.url}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (/application\/json/.test(res.headers.get("content-type") ?? "") ? JSON.parse(text) : text) as any,
  };
};
const ids = async (key: string, q: string) =>
  ((await call(key, "GET", `/v1/memories/search?q=${encodeURIComponent(q)}&k=20`)).body.data as any[]).map((m) => m.id);

const shared = (await call(ADMIN, "POST", "/v1/memories", { content: "Everyone uses the shared kiln on Fridays" })).body;
const alpha = (await call(ALPHA, "POST", "/v1/memories", { content: "Alpha fires its kiln at 1240 degrees" })).body;
const beta = (await call(BETA, "POST", "/v1/memories", { content: "Beta glazes before the kiln run" })).body;

t.test("a bound key writes and reads its own scope (and default), never the other's", async (t) => {
  t.equal(alpha.scope, A, "a bound key's first scope is its default");
  t.equal(beta.scope, B);
  t.equal(shared.scope, "default");
  const fromAlpha = await ids(ALPHA, "kiln");
  t.ok(fromAlpha.includes(alpha.id) && fromAlpha.includes(shared.id));
  t.notOk(fromAlpha.includes(beta.id));
  t.notOk((await ids(BETA, "kiln")).includes(alpha.id));
  const named = await call(ALPHA, "GET", "/v1/memories/search?q=kiln", undefined, { "x-psyche-scope": B });
  t.equal(named.status, 403, "naming another scope is refused");
  t.match(named.body.error, { code: "scope_not_allowed", param: "scope" });
  t.equal((await call(ALPHA, "GET", `/v1/memories/${beta.id}`)).status, 404);
  t.equal((await call(ALPHA, "GET", `/v1/memories/${beta.id}/history`)).status, 404);
  t.equal((await call(ALPHA, "PATCH", `/v1/memories/${beta.id}`, { content: "x" })).status, 404);
  t.equal((await call(ALPHA, "DELETE", `/v1/memories/${beta.id}`)).status, 404);
  const listed = (await call(ALPHA, "GET", "/v1/memories?limit=100")).body.data.map((m: any) => m.id);
  t.notOk(listed.includes(beta.id));
  const all = await ids(ADMIN, "kiln");
  t.same(all, [shared.id], "the admin key without a scope is in default");
  t.ok((await call(ADMIN, "GET", `/v1/memories/${beta.id}?scope=${encodeURIComponent(B)}`)).status === 200, "and may name any scope");
  t.equal((await call(undefined, "GET", "/v1/memories?limit=1")).status, 401);
  t.equal((await call("wrong-key-9999", "GET", "/v1/memories?limit=1")).status, 401);
});

t.test("export and import stay within the key's scopes", async (t) => {
  const mine = ((await call(ALPHA, "GET", "/v1/memories/export")).body as string)
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  t.ok(mine.length > 0);
  t.ok(
    mine.every((m) => m.scope === A),
    "a bound key exports its own scopes only",
  );
  const everything = ((await call(ADMIN, "GET", "/v1/memories/export")).body as string).trim().split("\n");
  t.ok(everything.length >= 3, "the admin key exports every scope");
  const imported = await call(
    ALPHA,
    "POST",
    "/v1/memories/import",
    `alpha's note\n${JSON.stringify({ content: "sneaking into beta", scope: B })}`,
  );
  t.equal(imported.status, 200);
  t.match(imported.body, { added: 1, refused: [{ line: 2, error: /not open to this API key/ }] });
  t.notOk((await ids(BETA, "sneaking")).length, "nothing reached beta");
});

t.test("chat: the conversation is in the key's scope; another scope's turns and responses are not there", async (t) => {
  const chat = await call(
    BETA,
    "POST",
    "/v1/chat/completions",
    { model: "psyche", messages: [{ role: "user", content: "hi" }], max_tokens: 4 },
    {
      "x-psyche-conversation": "beta-chat",
    },
  );
  t.equal(chat.status, 200);
  const turn = chat.headers.get("x-psyche-turn")!;
  t.equal((await call(ALPHA, "GET", `/v1/turns/${turn}`)).status, 404);
  t.equal((await call(ALPHA, "GET", `/v1/turns/${turn}/events?after=0`)).status, 404);
  t.equal((await call(BETA, "GET", `/v1/turns/${turn}`)).status, 200);
  const intoBeta = await call(
    ALPHA,
    "POST",
    "/v1/chat/completions",
    { model: "psyche", messages: [{ role: "user", content: "hi" }], max_tokens: 4 },
    {
      "x-psyche-conversation": "beta-chat",
    },
  );
  t.equal(intoBeta.status, 404, "alpha cannot continue beta's conversation");
  const response = await call(BETA, "POST", "/v1/responses", { model: "psyche", input: "hello", max_output_tokens: 4 });
  t.equal(response.status, 200);
  t.equal((await call(ALPHA, "GET", `/v1/responses/${response.body.id}`)).status, 404);
  t.equal((await call(BETA, "GET", `/v1/responses/${response.body.id}`)).status, 200);
});

t.test("MCP: a bound key gets the scoped tools only, in its scopes", async (t) => {
  const client = new Client({ name: "psyche-e2e", version: "0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${psyche.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ALPHA}` } } }),
  );
  t.teardown(() => client.close());
  const names = (await client.listTools()).tools.map((x) => x.name);
  t.ok(names.includes("recall_memory") && names.includes("chat"));
  t.notOk(names.includes("dream_journal") || names.includes("get_context_summary"), "no tool that reads across scopes");
  const recalled = (await client.callTool({ name: "recall_memory", arguments: { query: "kiln", k: 20 } })) as CallToolResult;
  const found = (recalled.structuredContent as any).memories.map((m: any) => m.id);
  t.ok(found.includes(alpha.id));
  t.notOk(found.includes(beta.id));
  const across = (await client.callTool({ name: "recall_memory", arguments: { query: "kiln", scope: B } })) as CallToolResult;
  t.equal(across.isError, true, "a scope argument outside the key is refused");
  const header = await fetch(`${psyche.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "*/*", authorization: `Bearer ${ALPHA}`, "x-psyche-scope": B },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  t.equal(header.status, 403);
});

t.test("hooks: the project's path must be one of the key's scopes", async (t) => {
  const hook = (key: string, cwd: string) =>
    call(key, "POST", "/hooks/user-prompt-submit?format=typed", {
      session_id: `hook-${cwd}`,
      cwd,
      hook_event_name: "UserPromptSubmit",
      prompt: "what about the kiln?",
    });
  const own = await hook(ALPHA, A);
  t.equal(own.status, 200);
  t.match(own.body.content, /1240 degrees/);
  t.notMatch(own.body.content, /Beta glazes/);
  t.equal((await hook(ALPHA, B)).status, 403);
});

/** The event stream's backlog as a key sees it: read for a moment, then closed. */
async function eventsSeenBy(key: string): Promise<{ type: string; data: any }[]> {
  const stop = new AbortController();
  const res = await fetch(`${psyche.url}/v1/events?backlog=1000`, { headers: { authorization: `Bearer ${key}` }, signal: stop.signal });
  if (res.status !== 200) throw new Error(`/v1/events: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let text = "";
  const timer = setTimeout(() => stop.abort(), 1500);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString("utf8");
    }
  } catch {
    // aborted: the backlog is in
  }
  clearTimeout(timer);
  return text
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)));
}

t.test("dreams, the journal, the dream state and the event stream keep scopes apart", async (t) => {
  const queued = await call(BETA, "POST", "/dream/jobs", { kind: "dream", max_tokens: 8 });
  t.equal(queued.status, 202);
  const job = queued.body.data[0].id;
  const done = await (async () => {
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const res = await call(BETA, "GET", `/dream/jobs/${job}`);
      if (res.body.status === "completed" && res.body.journal.length) return res.body;
    }
    throw new Error("timed out waiting for beta's dream");
  })();
  const dreamed = done.journal[0];
  t.equal(dreamed.scope, B, "a bound key's reverie draws on its own scope");
  t.equal((await call(ALPHA, "GET", `/dream/jobs/${job}`)).status, 404, "another scope's dream job is not there");
  const journalOf = async (key: string) => ((await call(key, "GET", "/dream/journal?limit=200")).body.data as any[]).map((d) => d.id);
  t.ok((await journalOf(BETA)).includes(dreamed.id));
  t.notOk((await journalOf(ALPHA)).includes(dreamed.id), "alpha's journal has not beta's dream");
  t.ok((await journalOf(ADMIN)).includes(dreamed.id), "the admin key reads every scope's journal");
  t.equal((await call(ALPHA, "GET", "/dream/status")).status, 200);
  const mood = (await call(ALPHA, "GET", "/v1/mood?limit=500")).body;
  t.ok(mood.history.length > 0 && mood.history.every((h: any) => h.source_id === null), "the mood, without what moved it");
  t.ok(
    ((await call(ADMIN, "GET", "/v1/mood?limit=500")).body.history as any[]).some((h) => h.source_id === dreamed.id),
    "the admin sees the sources",
  );

  const alphaSees = await eventsSeenBy(ALPHA);
  const stored = alphaSees.filter((e) => e.type === "memory.stored").map((e) => e.data.id);
  t.ok(stored.includes(alpha.id) && stored.includes(shared.id), "alpha's and default's memories are in alpha's stream");
  t.notOk(stored.includes(beta.id), "beta's memory is not");
  const named = alphaSees.filter((e) => JSON.stringify(e).includes(dreamed.id));
  t.same(named, [], "nothing in alpha's stream names beta's dream");
  t.ok(
    alphaSees.some((e) => e.type === "dream.state" && e.data.state === "dreaming"),
    "alpha still sees that the server dreamed (the state is the server's)",
  );
  const betaSees = await eventsSeenBy(BETA);
  t.ok(
    betaSees.some((e) => e.type === "dream.state" && e.data.journal_id === dreamed.id),
    "beta sees its own dream",
  );
  t.ok(betaSees.some((e) => e.type === "memory.stored" && e.data.id === beta.id));
  t.notOk(betaSees.some((e) => e.type === "memory.stored" && e.data.id === alpha.id));

  // While beta's reverie runs, alpha sees that the server dreams, not what about; and may wake it.
  const long = await call(BETA, "POST", "/dream/jobs", { kind: "dream", max_tokens: 8192, focus: "beta's glaze recipe" });
  const running = await (async () => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const res = await call(BETA, "GET", "/dream/status");
      if (res.body.state === "dreaming") return res.body;
    }
    throw new Error("timed out waiting for beta's second dream to run");
  })();
  t.match(running, { focus: "beta's glaze recipe", scope: B });
  const seen = (await call(ALPHA, "GET", "/dream/status")).body;
  t.match(seen, { state: /dreaming|waking/, focus: null, dream_id: null, scope: null }, "alpha: dreaming, about nothing it may read");
  t.equal((await call(ALPHA, "POST", "/dream/wake")).status, 200, "any key may wake the server");
  for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 100))) {
    if ((await call(BETA, "GET", `/dream/jobs/${long.body.data[0].id}`)).body.status === "completed") break;
    if (Date.now() > deadline) throw new Error("timed out waiting for the woken dream to end");
  }

  const across = await call(ALPHA, "POST", "/dream/jobs", { kind: "dream", scope: B });
  t.equal(across.status, 403, "a dream in another scope is refused");
  t.equal((await call(ALPHA, "POST", "/dream/jobs", { kind: "consolidate" })).status, 403, "a consolidation spans every scope");
  for (const [method, path] of [
    ["GET", "/dream/config"],
    ["PATCH", "/dream/config"],
    ["POST", "/dream/dnd"],
  ] as const) {
    const res = await call(ALPHA, method, path, method === "GET" ? undefined : {});
    t.equal(res.status, 403, `${method} ${path}: the server's settings`);
    t.match(res.body.error, { code: "scope_not_allowed" });
  }
});

t.test("/health without a key says only how it is", async (t) => {
  t.equal((await call(ADMIN, "GET", "/dream/config")).status, 200, "the admin key has the server's settings");
  const bare = await call(undefined, "GET", "/health");
  t.same(Object.keys(bare.body), ["status"]);
  t.match((await call(ADMIN, "GET", "/health")).body, { status: String, queue: Object, clients: Object });
});

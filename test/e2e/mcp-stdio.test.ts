// MCP over stdio: the SDK's client spawns `psyche mcp`, which bridges to a running server's
// /mcp (what Claude Desktop does). Without a server it says how to start one. The example
// hook script gets context from the same server, and stays quiet when there is none.
import t from "tap";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CallToolResult, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { packageRoot } from "../../src/paths.js";
import { CLI, runCli } from "../helpers/processes.js";
import { startPsyche, testConfig } from "../helpers/psyche.js";
import { testDatabaseUrl } from "../helpers/postgres.js";
import { serve } from "../../src/processes/serve.js";
import { createLogger } from "../../src/log.js";
import { serverDir } from "../helpers/testdir.js";

if (!existsSync(CLI)) {
  t.fail(`${CLI} is missing: run npm run build (npm test does)`);
  process.exit(1);
}

const API_KEY = "stdio-key-12345";
const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 32, apiKey: API_KEY });
/** A port nothing listens on: the server's own, after nothing has bound a fresh one. */
const DEAD_URL = "http://127.0.0.1:9";

const env = (extra: Record<string, string>) => {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("PSYCHE_")) clean[k] = v;
  return { ...clean, PSYCHE_LOG_LEVEL: "warn", ...extra };
};

t.test("the SDK's stdio client through psyche mcp", async (t) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    env: env({ PSYCHE_SERVER_URL: psyche.url, PSYCHE_API_KEY: API_KEY }),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "psyche-stdio-test", version: "0" });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.equal(client.getServerVersion()?.name, "psyche", "initialized through the bridge");
  const { tools } = await client.listTools();
  t.equal(tools.length, 21);
  const stored = (await client.callTool({
    name: "store_memory",
    arguments: { content: "Ada's favourite editor is Helix" },
  })) as CallToolResult;
  t.notOk(stored.isError, JSON.stringify(stored));
  const id = (stored.structuredContent as { id: string }).id;
  const read = await client.readResource({ uri: `psyche://memories/${id}` });
  t.match((read.contents[0] as { text: string }).text, /Helix/);
  const bad = (await client.callTool({ name: "store_memory", arguments: {} })) as CallToolResult;
  t.equal(bad.isError, true, "a bad call is an isError result through the bridge too");
  const chat = (await client.callTool({ name: "chat", arguments: { message: "hi from stdio", max_tokens: 5 } })) as CallToolResult;
  t.match(chat.structuredContent, { usage: { completion_tokens: 5 } });
  t.notMatch(stderr, /error/i, "the bridge logged no error");
});

t.test("psyche://events through the bridge: subscribe, be told of a change, read it, unsubscribe", async (t) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    env: env({ PSYCHE_SERVER_URL: psyche.url, PSYCHE_API_KEY: API_KEY }),
    stderr: "pipe",
  });
  const client = new Client({ name: "psyche-stdio-events", version: "0" });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.equal(client.getServerCapabilities()?.resources?.subscribe, true, "the bridge offers subscriptions");
  let updates = 0;
  let told!: () => void;
  const first = new Promise<void>((resolve) => (told = resolve));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri !== "psyche://events") return;
    updates++;
    told();
  });
  await client.subscribeResource({ uri: "psyche://events" });
  // The bridge follows from "now": give its stream a moment to open, then change something.
  await new Promise((r) => setTimeout(r, 500));
  const res = await fetch(`${psyche.url}/v1/memories`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ content: "Subscribers hear of this" }),
  });
  t.equal(res.status, 201);
  await Promise.race([first, new Promise((_, reject) => setTimeout(() => reject(new Error("no resources/updated within 10 s")), 10_000))]);
  t.ok(updates >= 1, "notifications/resources/updated for psyche://events");
  const read = JSON.parse(((await client.readResource({ uri: "psyche://events" })).contents[0] as { text: string }).text);
  t.match(
    read.data.findLast((e: { type: string }) => e.type === "memory.stored"),
    { data: { excerpt: "Subscribers hear of this" } },
  );
  await client.unsubscribeResource({ uri: "psyche://events" });
  const after = updates;
  await fetch(`${psyche.url}/v1/memories`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ content: "Nobody listens now" }),
  });
  await new Promise((r) => setTimeout(r, 1000));
  t.equal(updates, after, "no notifications after unsubscribing");
});

t.test("a client that writes its requests and closes stdin gets every answer, then the bridge exits 0", async (t) => {
  const child = spawn(process.execPath, [CLI, "mcp"], {
    env: env({ PSYCHE_SERVER_URL: psyche.url, PSYCHE_API_KEY: API_KEY }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const lines = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pipe", version: "0" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "chat", arguments: { message: "one reply, then goodbye", max_tokens: 5 } },
    },
  ];
  child.stdin.end(lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  t.equal(code, 0, stderr);
  const answers = stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: number; result?: { structuredContent?: { usage?: { completion_tokens: number } } } });
  t.same(
    answers.map((a) => a.id),
    [1, 2],
    "the chat that was still running when stdin ended was answered",
  );
  t.equal(answers[1]!.result?.structuredContent?.usage?.completion_tokens, 5);
  t.notMatch(stderr, /RangeError|Error/, "closing is clean");
});

t.test("a wrong or missing API key: the bridge says so and exits 1", async (t) => {
  const wrong = await runCli(["mcp"], env({ PSYCHE_SERVER_URL: psyche.url, PSYCHE_API_KEY: "wrong-key-0000" }));
  t.equal(wrong.code, 1);
  t.match(wrong.out, /refused the API key: set PSYCHE_API_KEY/);
  const missing = await runCli(["mcp"], env({ PSYCHE_SERVER_URL: psyche.url }));
  t.equal(missing.code, 1);
  t.match(missing.out, /refused a request without an API key/);
});

t.test("no server running: a clear message and exit 1", async (t) => {
  const res = await runCli(["mcp"], env({ PSYCHE_SERVER_URL: DEAD_URL }));
  t.equal(res.code, 1);
  t.match(res.out, /no Psyche server at http:\/\/127\.0\.0\.1:9/);
  t.match(res.out, /psyche serve/, "says how to start one");
  const bad = await runCli(["mcp", "--server-url", "ftp://example.com"], env({}));
  t.equal(bad.code, 2, "a bad URL is a usage error");
  t.match(bad.out, /server-url|serverUrl|PSYCHE_SERVER_URL/);
});

t.test("the server restarts under a running bridge: a clear error meanwhile, then it works again", async (t) => {
  const dir = serverDir(t);
  const databaseUrl = await testDatabaseUrl(dir);
  const db = databaseUrl ? { databaseUrl } : {};
  const first = await serve(testConfig(dir, { ...db, recallPromptTokens: 0 }), createLogger("silent"));
  const port = first.port;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    env: env({ PSYCHE_SERVER_URL: first.url }),
    stderr: "pipe",
  });
  const client = new Client({ name: "psyche-stdio-test", version: "0" });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.notOk(((await client.callTool({ name: "get_emotion", arguments: {} })) as CallToolResult).isError);
  await first.stop();
  await t.rejects(
    client.callTool({ name: "get_emotion", arguments: {} }),
    /did not answer/,
    "a request while the server is down is answered with an error",
  );
  const second = await serve(testConfig(dir, { ...db, recallPromptTokens: 0, port }), createLogger("silent"));
  t.teardown(() => second.stop());
  const after = (await client.callTool({ name: "get_emotion", arguments: {} })) as CallToolResult;
  t.notOk(after.isError, "the same bridge works with the restarted server: nothing was held between requests");
});

const HOOK = join(packageRoot(), "examples", "hooks", "assemble-context.mjs");

async function runHook(stdin: string, extra: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [HOOK], { env: env(extra), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(stdin);
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { code, stdout, stderr };
}

t.test("the example hook script prints the context for a prompt", async (t) => {
  await psyche.mem.memory.remember({
    kind: "semantic",
    content: "The deploy script lives in ops/deploy.sh and needs VPN access",
    sourceKind: "api",
  });
  const hook = await runHook(
    JSON.stringify({ session_id: "s1", hook_event_name: "UserPromptSubmit", prompt: "how do I run the deploy script?" }),
    {
      PSYCHE_SERVER_URL: psyche.url,
      PSYCHE_API_KEY: API_KEY,
      PSYCHE_HOOK_TIMEOUT_MS: "5000",
    },
  );
  t.equal(hook.code, 0, hook.stderr);
  t.match(hook.stdout, /## What Psyche remembers/);
  t.match(hook.stdout, /ops\/deploy\.sh/);
  const plain = await runHook("deploy script", { PSYCHE_SERVER_URL: psyche.url, PSYCHE_API_KEY: API_KEY, PSYCHE_HOOK_TIMEOUT_MS: "5000" });
  t.match(plain.stdout, /ops\/deploy\.sh/, "plain text on stdin works too");
});

t.test("the hook never holds a prompt up: no server, or a refusal, prints nothing and exits 0", async (t) => {
  const dead = await runHook(JSON.stringify({ prompt: "anything" }), { PSYCHE_SERVER_URL: DEAD_URL });
  t.equal(dead.code, 0);
  t.equal(dead.stdout, "");
  t.match(dead.stderr, /psyche hook: no context/);
  const refused = await runHook(JSON.stringify({ prompt: "anything" }), { PSYCHE_SERVER_URL: psyche.url, PSYCHE_HOOK_TIMEOUT_MS: "5000" });
  t.equal(refused.code, 0);
  t.equal(refused.stdout, "");
  t.match(refused.stderr, /401/);
});

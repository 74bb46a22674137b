/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Corrections with history, end to end: PATCH and MCP's correct_memory write new versions that
// GET /v1/memories/:id/history lists; a memory that supersedes another pushes it out of default
// search (readable still, and with include_superseded); bad corrections change nothing.
import t from "tap";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 16 });

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${psyche.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const search = async (q: string, extra = "") =>
  (await api("GET", `/v1/memories/search?q=${encodeURIComponent(q)}&k=10${extra}`)).body.data as any[];

t.test("PATCH writes a new version; history lists each, oldest first, with when and by what", async (t) => {
  const created = await api("POST", "/v1/memories", { content: "Mira's favourite tea is jasmine", tags: ["mira"], importance: 0.5 });
  t.equal(created.status, 201);
  const id = created.body.id;
  t.match(created.body, { version: 1, supersedes: [], superseded_by: null });

  const fixed = await api("PATCH", `/v1/memories/${id}`, { content: "Mira's favourite tea is genmaicha", importance: 0.8 });
  t.equal(fixed.status, 200);
  t.match(fixed.body, { id, content: "Mira's favourite tea is genmaicha", importance: 0.8, version: 2, tags: ["mira"] });
  const tags = await api("PATCH", `/v1/memories/${id}`, { tags: ["mira", "tea"] });
  t.match(tags.body, { version: 3, tags: ["mira", "tea"], content: "Mira's favourite tea is genmaicha" });

  const history = await api("GET", `/v1/memories/${id}/history`);
  t.equal(history.status, 200);
  t.match(history.body, { object: "list", memory_id: id });
  t.match(history.body.data, [
    { version: 1, change: "created", by: "api", content: "Mira's favourite tea is jasmine", importance: 0.5 },
    { version: 2, change: "corrected", by: "api", content: "Mira's favourite tea is genmaicha", importance: 0.8 },
    { version: 3, change: "corrected", by: "api", tags: ["mira", "tea"] },
  ]);
  const times = history.body.data.map((v: any) => Date.parse(v.at));
  t.ok(
    times.every((x: number, i: number) => i === 0 || x >= times[i - 1]),
    "oldest first",
  );

  // The new words are found, the old ones no longer: the text was embedded and indexed again.
  t.ok(
    (await search("genmaicha")).some((m) => m.id === id),
    "found by its corrected text",
  );
  t.notOk(
    (await search("jasmine")).some((m) => m.id === id),
    "not by its old text",
  );
});

t.test("a memory that supersedes another: the old one leaves default search and keeps its history", async (t) => {
  const paris = (await api("POST", "/v1/memories", { content: "The user lives in Paris, near the canal", importance: 0.9 })).body;
  const lyon = await api("POST", "/v1/memories", {
    content: "The user moved to Lyon in March and lives there now",
    importance: 0.6,
    supersedes: [paris.id],
  });
  t.equal(lyon.status, 201);
  t.same(lyon.body.supersedes, [paris.id]);

  const found = await search("where does the user live?");
  t.notOk(
    found.some((m) => m.id === paris.id),
    "the superseded fact is out of default search, more important though it was",
  );
  const hit = found.find((m) => m.id === lyon.body.id);
  t.ok(hit, "the correction is found instead");
  t.same(hit.supersedes, [paris.id], "and says what it superseded");

  const all = await search("where does the user live?", "&include_superseded=true");
  const old = all.find((m) => m.id === paris.id);
  t.ok(old, "include_superseded=true finds it");
  t.equal(old.superseded_by, lyon.body.id);
  t.ok(old.superseded_at);

  const read = await api("GET", `/v1/memories/${paris.id}`);
  t.equal(read.status, 200, "still readable");
  t.equal(read.body.superseded_by, lyon.body.id);
  const history = (await api("GET", `/v1/memories/${paris.id}/history`)).body.data;
  t.match(history, [
    { version: 1, change: "created", content: "The user lives in Paris, near the canal" },
    { version: 2, change: "superseded", by: "supersession", related: [lyon.body.id] },
  ]);
  t.match((await api("GET", `/v1/memories/${lyon.body.id}/history`)).body.data, [{ version: 1, change: "created", related: [paris.id] }]);

  // Saying the old fact again is a new memory, not a reinforcement of the one that lost.
  const again = await api("POST", "/v1/memories", { content: "The user lives in Paris, near the canal" });
  t.equal(again.status, 201);
  t.not(again.body.id, paris.id);
});

t.test("MCP: correct_memory writes a version by mcp; store_memory can supersede", async (t) => {
  const client = new Client({ name: "psyche-e2e", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${psyche.url}/mcp`)));
  t.teardown(() => client.close());
  const stored = (await client.callTool({
    name: "store_memory",
    arguments: { content: "The repo's CI runs on Buildkite" },
  })) as CallToolResult;
  const id = (stored.structuredContent as any).id as string;
  const corrected = (await client.callTool({
    name: "correct_memory",
    arguments: { id, content: "The repo's CI runs on GitHub Actions since May" },
  })) as CallToolResult;
  t.notOk(corrected.isError, JSON.stringify(corrected.content));
  t.match(corrected.structuredContent, { id, version: 2, content: "The repo's CI runs on GitHub Actions since May" });
  t.match((await api("GET", `/v1/memories/${id}/history`)).body.data, [
    { version: 1, change: "created", by: "mcp" },
    { version: 2, change: "corrected", by: "mcp", content: "The repo's CI runs on GitHub Actions since May" },
  ]);

  const newer = (await client.callTool({
    name: "store_memory",
    arguments: { content: "The repo's CI moved to a self-hosted runner", supersedes: [id], summary: "CI runner", kind: "episodic" },
  })) as CallToolResult;
  t.notOk(newer.isError);
  t.match(newer.structuredContent, { summary: "CI runner", kind: "episodic" }, "a summary and a kind, as given");
  t.equal((await api("GET", `/v1/memories/${id}`)).body.superseded_by, (newer.structuredContent as any).id);

  const unknown = (await client.callTool({
    name: "correct_memory",
    arguments: { id: "00000000-0000-4000-8000-000000000000", content: "x" },
  })) as CallToolResult;
  t.equal(unknown.isError, true);
  t.match((unknown.content as any)[0].text, /no memory/);
  const empty = (await client.callTool({ name: "correct_memory", arguments: { id } })) as CallToolResult;
  t.equal(empty.isError, true, "a correction with nothing in it is refused");
});

t.test("bad corrections: OpenAI's error shape, the memory unchanged", async (t) => {
  const id = (await api("POST", "/v1/memories", { content: "The boiler was serviced in October" })).body.id;
  const missing = "00000000-0000-4000-8000-000000000000";
  const cases: [string, string, unknown, number, RegExp][] = [
    ["PATCH", `/v1/memories/${id}`, {}, 400, /at least one/],
    ["PATCH", `/v1/memories/${id}`, { content: "" }, 400, /empty/],
    ["PATCH", `/v1/memories/${id}`, { importance: 2 }, 400, /importance/],
    ["PATCH", `/v1/memories/${id}`, { colour: "red" }, 400, /colour/],
    ["PATCH", `/v1/memories/${id}`, "{nope", 400, /JSON/i],
    ["PATCH", `/v1/memories/${id}`, { content: "fine", supersedes: [missing] }, 400, /supersedes: no memory/],
    ["PATCH", `/v1/memories/${missing}`, { content: "x" }, 404, /no memory/],
    ["PATCH", "/v1/memories/not-a-uuid", { content: "x" }, 400, /UUID/],
    ["GET", `/v1/memories/${missing}/history`, undefined, 404, /no memory/],
    ["POST", "/v1/memories", { content: "x", supersedes: [missing] }, 400, /supersedes: no memory/],
    ["GET", "/v1/memories/search?q=x&include_superseded=maybe", undefined, 400, /include_superseded/],
  ];
  for (const [method, path, body, status, message] of cases) {
    const res = await api(method, path, body);
    t.equal(res.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.match(res.body.error?.message, message);
  }
  const after = await api("GET", `/v1/memories/${id}`);
  t.match(after.body, { content: "The boiler was serviced in October", version: 1 }, "unchanged");
  t.equal((await api("GET", `/v1/memories/${id}/history`)).body.data.length, 1);
});

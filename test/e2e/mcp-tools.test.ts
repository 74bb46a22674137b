/* eslint-disable @typescript-eslint/no-explicit-any -- structured tool results are read as JSON */
// Psyche's MCP tools and resources, in process: the SDK's own client over its linked
// in-memory transports, against a real Psyche (embedded Postgres, pg-boss, tiny model).
import t from "tap";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { appendMessages, openConversation } from "../../src/db/sql/conversations.js";
import { endDream, startDream } from "../../src/db/sql/dreams.js";
import { inTransaction } from "../../src/db/pool.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { INSIGHTS_HEADING, MEMORIES_HEADING } from "../../src/memory/assemble-context.js";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 64 });
const pool = psyche.db.pool;

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
const server = createMcpServer(psyche.web);
await server.connect(serverSide);
const client = new Client({ name: "psyche-test", version: "0" });
await client.connect(clientSide);
t.teardown(() => client.close());

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");
const count = async (table: string) => (await pool.query(`select count(*)::int as n from ${table}`)).rows[0].n as number;

t.test("the twenty-one tools, with input schemas, and the two resource templates", async (t) => {
  const { tools } = await client.listTools();
  t.same(tools.map((x) => x.name).sort(), [
    "add_tool_result",
    "assemble_context",
    "chat",
    "correct_memory",
    "dream_journal",
    "dream_status",
    "get_active_ghap",
    "get_context_summary",
    "get_emotion",
    "get_mood",
    "get_orphaned_ghap",
    "increment_tool_count",
    "recall_memory",
    "reset_tool_count",
    "resolve_ghap",
    "set_ghap",
    "should_check_in",
    "start_session",
    "store_memory",
    "update_ghap",
    "wake",
  ]);
  const assemble = tools.find((x) => x.name === "assemble_context")!;
  t.match(assemble.inputSchema, { type: "object", properties: { query: { type: "string" }, max_tokens: { type: "integer" } } });
  t.ok(assemble.outputSchema, "assemble_context declares its output");
  const { resourceTemplates } = await client.listResourceTemplates();
  t.same(resourceTemplates.map((r) => r.uriTemplate).sort(), ["psyche://dreams/{id}", "psyche://memories/{id}"]);
});

t.test("store_memory, recall_memory, and the memory as a resource", async (t) => {
  const stored = await call("store_memory", { content: "Mira keeps bees on the roof of her flat", tags: ["mira"], importance: 0.7 });
  t.notOk(stored.isError, text(stored));
  const memory = stored.structuredContent as any;
  t.match(memory, {
    kind: "semantic",
    content: "Mira keeps bees on the roof of her flat",
    tags: ["mira"],
    importance: 0.7,
    reinforced: false,
  });
  const again = await call("store_memory", { content: "Mira keeps bees on the roof of her flat" });
  t.equal((again.structuredContent as any).reinforced, true, "a duplicate reinforces");
  t.equal((again.structuredContent as any).id, memory.id);

  const recalled = await call("recall_memory", { query: "who keeps bees?", k: 3 });
  t.notOk(recalled.isError);
  t.equal((recalled.structuredContent as any).memories[0].id, memory.id);
  t.match(text(recalled), /Mira keeps bees/);

  const read = await client.readResource({ uri: `psyche://memories/${memory.id}` });
  const content = read.contents[0] as { uri: string; mimeType?: string; text: string };
  t.equal(content.mimeType, "application/json");
  t.match(JSON.parse(content.text), { id: memory.id, content: "Mira keeps bees on the roof of her flat" });
  const listed = await client.listResources();
  t.ok(
    listed.resources.some((r) => r.uri === `psyche://memories/${memory.id}`),
    "listed among the newest memories",
  );

  // The event log as a resource: the store above is its latest memory.stored event.
  t.ok(
    listed.resources.some((r) => r.uri === "psyche://events"),
    "the events resource is listed",
  );
  const events = JSON.parse(((await client.readResource({ uri: "psyche://events" })).contents[0] as { text: string }).text);
  const storedEvent = events.data.findLast((e: any) => e.type === "memory.stored");
  t.match(storedEvent, { type: "memory.stored", data: { id: memory.id, kind: "semantic" } });
  t.equal(events.last_id, events.data.at(-1).id);
});

t.test("bad arguments come back as isError results, and store nothing", async (t) => {
  const before = await count("memories");
  const empty = await call("store_memory", { content: "   " });
  t.equal(empty.isError, true);
  t.match(text(empty), /content/);
  const wrongType = await call("store_memory", { content: "fine", importance: 7 });
  t.equal(wrongType.isError, true);
  t.match(text(wrongType), /importance/);
  t.equal(await count("memories"), before, "nothing stored");
  const noQuery = await call("recall_memory", {});
  t.equal(noQuery.isError, true);
  t.match(text(noQuery), /query/);
  const budget = await call("assemble_context", { query: "bees", max_tokens: 0 });
  t.equal(budget.isError, true);
  t.match(text(budget), /max_tokens/);
  const unknown = await call("no_such_tool");
  t.equal(unknown.isError, true);
  t.match(text(unknown), /no_such_tool/);
});

t.test("assemble_context: relevant memories and recent insights within the budget", async (t) => {
  await psyche.mem.memory.remember({
    kind: "semantic",
    content: "The bees swarmed in May and Mira caught the swarm in a box",
    sourceKind: "api",
  });
  await psyche.mem.memory.remember({ kind: "semantic", content: "Jonas repairs old bicycles in his garage", sourceKind: "api" });
  const insight = await psyche.mem.memory.remember({
    kind: "insight",
    content: "Mira finds calm in looking after living things",
    importance: 0.8,
    sourceKind: "dream",
  });
  const dream = await psyche.mem.memory.remember({
    kind: "dream",
    content: "A hive of glass bees hummed over the city",
    importance: 0.9,
    sourceKind: "dream",
  });

  const full = await call("assemble_context", { query: "Mira's bees", max_tokens: 1500 });
  t.notOk(full.isError, text(full));
  const out = full.structuredContent as any;
  t.equal(text(full), out.markdown, "the text is the markdown itself, for a hook to print");
  t.match(out.markdown, MEMORIES_HEADING);
  t.match(out.markdown, /Mira keeps bees/);
  t.match(out.markdown, INSIGHTS_HEADING);
  t.ok(out.insight_ids.includes(insight.memory.id), "the recent insight");
  t.notOk(out.markdown.includes("glass bees"), "dreams are not offered as memories or insights");
  t.notOk(out.memory_ids.includes(dream.memory.id));
  t.ok(out.markdown.indexOf("Mira keeps bees") < out.markdown.indexOf(INSIGHTS_HEADING), "memories first");
  t.equal(out.truncated, false);
  t.ok(out.token_estimate <= 1500);

  const tight = (await call("assemble_context", { query: "Mira's bees", max_tokens: 40 })).structuredContent as any;
  t.ok(tight.token_estimate <= 40, `estimated ${tight.token_estimate} tokens within 40`);
  t.equal(tight.truncated, true, "says that something was left out");
  t.ok(tight.memory_ids.length + tight.insight_ids.length < out.memory_ids.length + out.insight_ids.length);

  const none = (await call("assemble_context", { query: "", max_tokens: 500 })).structuredContent as any;
  t.same(none.memory_ids, [], "no query, no memories");
  t.ok(none.insight_ids.includes(insight.memory.id), "but the recent insights");
});

t.test("get_mood agrees with /v1/mood, and get_emotion (its first name) with both", async (t) => {
  const mood = await call("get_mood");
  const http = (await (await fetch(`${psyche.url}/v1/mood`)).json()) as any;
  t.equal(http.object, "mood");
  t.equal((mood.structuredContent as any).valence, http.valence);
  t.match(text(mood), /mood/);
  const alias = await call("get_emotion");
  t.same(alias.structuredContent, mood.structuredContent, "the alias answers the same");
});

t.test("the dream journal, dream_status and wake", async (t) => {
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  for (const [i, id] of ids.entries()) {
    await startDream(pool, { id, kind: i === 1 ? "reflect" : "dream", jobId: null, focus: null, seedMemoryIds: [], model: "tiny" });
    await endDream(pool, id, { status: "done", content: `entry number ${i}`, tokens: 3, significance: null, valence: null, arousal: null });
    await pool.query("update dream_journal set started_at = now() - make_interval(mins => $2) where id = $1", [id, 10 - i]);
  }
  const page = (await call("dream_journal", { limit: 2 })).structuredContent as any;
  t.same(
    page.entries.map((e: any) => e.id),
    [ids[2], ids[1]],
    "newest first",
  );
  t.ok(page.next_before);
  const next = (await call("dream_journal", { limit: 2, before: page.next_before })).structuredContent as any;
  t.same(
    next.entries.map((e: any) => e.id),
    [ids[0]],
  );
  t.equal(next.next_before, null);
  const reflections = await call("dream_journal", { kind: "reflect" });
  t.same(
    (reflections.structuredContent as any).entries.map((e: any) => e.id),
    [ids[1]],
  );
  t.match(text(reflections), /entry number 1/);
  const bad = await call("dream_journal", { kind: "nightmare" });
  t.equal(bad.isError, true);
  t.match(text(bad), /kind/);

  const read = await client.readResource({ uri: `psyche://dreams/${ids[0]}` });
  t.match(JSON.parse((read.contents[0] as { text: string }).text), { id: ids[0], content: "entry number 0", kind: "dream" });
  await t.rejects(client.readResource({ uri: `psyche://dreams/${randomUUID()}` }), /No journal entry/);
  await t.rejects(client.readResource({ uri: "psyche://dreams/not-an-id" }), /UUID/);

  const status = await call("dream_status");
  t.match(status.structuredContent, { state: /^(sleeping|awake)$/, can_interrupt: true, dnd_until: null });
  await pool.query("update dream_settings set dnd_until = now() + interval '1 hour', dnd_reason = 'test'");
  t.match((await call("dream_status")).structuredContent, { can_interrupt: false, dnd_reason: "test" });
  const woke = await call("wake");
  t.notOk(woke.isError);
  t.equal((woke.structuredContent as any).dream_id, null, "nothing was dreaming");
  t.match((await call("dream_status")).structuredContent, { can_interrupt: true, dnd_until: null }, "waking ends do-not-disturb");
});

t.test("chat: a new conversation, then continuing it by id", async (t) => {
  const first = await call("chat", { message: "Hello, Psyche", max_tokens: 8 });
  t.notOk(first.isError, text(first));
  const out = first.structuredContent as any;
  t.match(out, { finish_reason: "length", tool_calls: [], usage: { completion_tokens: 8 } });
  t.ok(out.reply.length > 0);
  t.match(text(first), out.conversation_id, "the text names the conversation, for models that read only text");
  const second = (await call("chat", { message: "And again", conversation_id: out.conversation_id, max_tokens: 8 }))
    .structuredContent as any;
  t.equal(second.conversation_id, out.conversation_id);
  const messages = await pool.query(
    "select role, content from messages where conversation_id = $1 and superseded_at is null order by position",
    [out.conversation_id],
  );
  t.same(
    messages.rows.map((m) => m.role),
    ["user", "assistant", "user", "assistant"],
  );
  t.equal(messages.rows[3].content, second.reply);

  const summary = await call("get_context_summary", { conversation_id: out.conversation_id, messages: 2 });
  t.notOk(summary.isError);
  t.match((summary.structuredContent as any).conversation, { id: out.conversation_id, message_count: 4 });
  t.equal((summary.structuredContent as any).conversation.recent.length, 2);
  t.match(text(summary), /user: And again/);
  const latest = await call("get_context_summary");
  t.equal((latest.structuredContent as any).conversation.id, out.conversation_id, "the most recently active conversation by default");
});

t.test("chat's bad arguments are isError results that store nothing", async (t) => {
  const before = await count("turns");
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ message: "" }, /message/],
    [{ message: "hi", conversation_id: "no spaces allowed" }, /conversation_id/],
    [{ message: "hi", tools: [{ type: "function", function: { name: "bad name!" } }] }, /tools/],
    [
      {
        message: "hi",
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "strnig" } } } } }],
      },
      /parameters/,
    ],
    [{ message: "hi", tool_choice: "required" }, /needs tools/],
  ];
  for (const [args, message] of cases) {
    const r = await call("chat", args);
    t.equal(r.isError, true, JSON.stringify(args));
    t.match(text(r), message);
  }
  t.equal(await count("turns"), before, "no turn was queued");
  const clamped = await call("chat", { message: "hi", max_tokens: 65 });
  t.notOk(clamped.isError, "a max_tokens above the ceiling is clamped to it, as on every API");
  t.equal((await pool.query("select max_tokens from turns order by created_at desc limit 1")).rows[0].max_tokens, 64);
  const missing = await call("get_context_summary", { conversation_id: "never-was" });
  t.equal(missing.isError, true);
  t.match(text(missing), /No conversation 'never-was'/);
});

const readFile = {
  type: "function",
  function: {
    name: "read_file",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string", maxLength: 20 } }, required: ["path"] },
  },
};

t.test("chat with client tools, then add_tool_result continues the conversation", async (t) => {
  const first = await call("chat", {
    message: "What is in notes.txt?",
    tools: [readFile],
    tool_choice: { type: "function", function: { name: "read_file" } },
    max_tokens: 64,
  });
  t.notOk(first.isError, text(first));
  const out = first.structuredContent as any;
  t.equal(out.finish_reason, "tool_calls");
  t.equal(out.tool_calls.length, 1);
  t.equal(out.tool_calls[0].name, "read_file");
  t.type(JSON.parse(out.tool_calls[0].arguments).path, "string");
  t.match(text(first), out.tool_calls[0].id);

  const answered = await call("add_tool_result", {
    conversation_id: out.conversation_id,
    tool_call_id: out.tool_calls[0].id,
    result: "buy milk",
  });
  t.notOk(answered.isError, text(answered));
  const next = answered.structuredContent as any;
  t.equal(next.state, "replied");
  t.not(next.turn_id, out.turn_id, "a new turn");
  const turn = (await pool.query("select tools, tool_choice from turns where id = $1", [next.turn_id])).rows[0];
  t.same(
    turn.tools.map((x: any) => x.name),
    ["read_file"],
    "the same tools are offered again",
  );
  t.equal(turn.tool_choice, "auto", "and the model chooses");
  const roles = await pool.query("select role, tool_call_id, content from messages where conversation_id = $1 order by position", [
    out.conversation_id,
  ]);
  t.same(
    roles.rows.slice(0, 3).map((m) => m.role),
    ["user", "assistant", "tool"],
  );
  t.match(roles.rows[2], { tool_call_id: out.tool_calls[0].id, content: "buy milk" });

  const twice = await call("add_tool_result", {
    conversation_id: out.conversation_id,
    tool_call_id: out.tool_calls[0].id,
    result: "again",
  });
  t.equal(twice.isError, true, "a call is answered once");
  t.match(text(twice), /not waiting|no tool call/);
});

t.test("parallel calls: each result is kept, the last one continues", async (t) => {
  const conversationId = `parallel-${randomUUID().slice(0, 8)}`;
  await inTransaction(pool, async (client) => {
    await openConversation(client, conversationId);
    await appendMessages(client, conversationId, null, [
      { role: "user", content: "Read both files" },
      {
        role: "assistant",
        content: "",
        toolCalls: [
          { id: "call_a", name: "read_file", arguments: '{"path":"a.txt"}' },
          { id: "call_b", name: "read_file", arguments: '{"path":"b.txt"}' },
        ],
      },
    ]);
  });
  const turnsBefore = await count("turns");
  const a = await call("add_tool_result", { conversation_id: conversationId, tool_call_id: "call_a", result: "alpha" });
  t.same(a.structuredContent, { state: "waiting", waiting_for: ["call_b"] });
  t.equal(await count("turns"), turnsBefore, "no turn until every call has its result");
  const stray = await call("add_tool_result", { conversation_id: conversationId, tool_call_id: "call_zzz", result: "?" });
  t.equal(stray.isError, true);
  t.match(text(stray), /call_b/, "names the call that waits");
  const b = await call("add_tool_result", { conversation_id: conversationId, tool_call_id: "call_b", result: "beta" });
  t.notOk(b.isError, text(b));
  t.equal((b.structuredContent as any).state, "replied");
  const tools = await pool.query(
    "select tool_call_id, content from messages where conversation_id = $1 and role = 'tool' order by position",
    [conversationId],
  );
  t.same(tools.rows, [
    { tool_call_id: "call_a", content: "alpha" },
    { tool_call_id: "call_b", content: "beta" },
  ]);

  const conversationsBefore = await count("conversations");
  const unknown = await call("add_tool_result", { conversation_id: "nobody-here", tool_call_id: "call_a", result: "x" });
  t.equal(unknown.isError, true);
  t.match(text(unknown), /No conversation 'nobody-here'/);
  t.equal(await count("conversations"), conversationsBefore, "no conversation was made for it");
});

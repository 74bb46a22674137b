/* eslint-disable @typescript-eslint/no-explicit-any -- structured tool results are read as JSON */
// Coding-agent sessions and GHAP through the MCP SDK's client over HTTP on a real server
// (embedded Postgres, tiny model): every tool, an orphan found by the next session, the check-in
// count, a resolved GHAP remembered as experience and offered by assemble_context.
import t from "tap";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { EXPERIENCES_HEADING, GHAP_HEADING } from "../../src/memory/assemble-context.js";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 32 });
const pool = psyche.db.pool;
const client = new Client({ name: "agent-test", version: "0" });
await client.connect(new StreamableHTTPClientTransport(new URL(`${psyche.url}/mcp`)));
t.teardown(() => client.close());

const call = async (name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const ok = async (name: string, args: Record<string, unknown> = {}) => {
  const r = await call(name, args);
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return r.structuredContent as any;
};
const errorText = async (name: string, args: Record<string, unknown> = {}) => {
  const r = await call(name, args);
  return r.isError ? r.content.map((c) => (c.type === "text" ? c.text : "")).join("") : undefined;
};
const GHAP = {
  goal: "fix the flaky wake test",
  hypothesis: "the dream starts before the chat's signal is heard",
  action: "add a barrier before the chat",
  prediction: "ten runs of ten pass",
};

t.test("a session, its GHAP, an orphan for the next session, adoption", async (t) => {
  t.match(await errorText("set_ghap", { ...GHAP, project: "/work/a" }), /No open agent session for \/work\/a: call start_session first/);
  const first = await ok("start_session", { project: "/work/a", agent: "claude-code" });
  t.match(first, { project: "/work/a", agent: "claude-code", resumed: false, orphans: [], tool_count: 0 });
  const set = await ok("set_ghap", { ...GHAP, session_id: first.session_id });
  t.match(set, { ...GHAP, status: "active", session_id: first.session_id });
  t.match(
    await errorText("set_ghap", { ...GHAP, session_id: first.session_id }),
    /already has an active GHAP/,
    "one active GHAP per session",
  );
  t.match(await ok("get_active_ghap", { project: "/work/a" }), { has_active: true, ghap: { id: set.id } });
  t.same(await ok("get_orphaned_ghap", { project: "/work/a" }), { has_orphan: false, orphans: [] });

  // The session crashes (no session-end); the next one of the project ends it and finds the orphan.
  const second = await ok("start_session", { project: "/work/a", agent: "claude-code" });
  t.same(second.ended_sessions, [first.session_id]);
  t.match(second.orphans, [{ id: set.id, goal: GHAP.goal, project: "/work/a" }]);
  t.match(await ok("get_orphaned_ghap", {}), { has_orphan: true, orphans: [{ id: set.id }] });
  t.match(await ok("get_active_ghap", { session_id: second.session_id }), { has_active: false, ghap: null });

  // Another project's session does not end this one.
  const other = await ok("start_session", { project: "/work/b" });
  t.equal((await pool.query("select ended_at from agent_sessions where id = $1", [second.session_id])).rows[0].ended_at, null);
  t.same((await ok("get_orphaned_ghap", { project: "/work/b" })).orphans, []);

  // Adopting: updating the orphan from the open session moves it there.
  const adopted = await ok("update_ghap", { id: set.id, session_id: second.session_id, prediction: "twenty runs pass" });
  t.match(adopted, { adopted: true, session_id: second.session_id, prediction: "twenty runs pass", goal: GHAP.goal });
  t.same((await ok("get_orphaned_ghap", {})).orphans, []);
  const updated = await ok("update_ghap", { session_id: second.session_id, action: "a barrier and a retry" });
  t.match(updated, { adopted: false, id: set.id, action: "a barrier and a retry" });
  t.match(await errorText("update_ghap", { id: "00000000-0000-4000-8000-000000000000" }), /No GHAP/);
  t.match(await errorText("update_ghap", { session_id: other.session_id, goal: "x" }), /has no active GHAP: set_ghap first/);
});

t.test("resolve_ghap: the outcome, a memory tagged ghap, experience in assemble_context", async (t) => {
  const s = await ok("start_session", { project: "/work/c", external_id: "claude-session-c" });
  const g = await ok("set_ghap", {
    goal: "speed up the kiln firing schedule parser",
    hypothesis: "regex backtracking dominates",
    action: "profile the parser",
    prediction: "the regex is 80% of the time",
    session_id: "claude-session-c",
  });
  t.equal(g.session_id, s.session_id, "the agent's own session id finds the session");
  const ctx = await ok("assemble_context", { query: "kiln parser", session_id: s.session_id, context_types: ["active_ghap"] });
  t.match(ctx.markdown, GHAP_HEADING);
  t.match(ctx.markdown, /regex backtracking dominates/);
  t.equal(ctx.ghap_id, g.id);

  const resolved = await ok("resolve_ghap", {
    outcome: "falsified",
    note: "the time goes to reading the file line by line",
    session_id: s.session_id,
  });
  t.match(resolved, { id: g.id, status: "falsified", outcome_note: "the time goes to reading the file line by line" });
  t.ok(resolved.memory_id, "it became a memory");
  const memory = (
    await pool.query("select kind, tags, source_kind, source_id, citations, content from memories where id = $1", [resolved.memory_id])
  ).rows[0];
  t.match(memory, { kind: "semantic", tags: ["ghap", "falsified"], source_kind: "ghap", source_id: g.id, citations: [] });
  t.match(
    memory.content,
    /Experience \(falsified\): goal: speed up the kiln firing schedule parser[\s\S]*outcome: falsified: the time goes to reading the file line by line/,
  );
  t.match(await errorText("resolve_ghap", { outcome: "confirmed", id: g.id }), /already falsified/);
  t.match(await ok("get_active_ghap", { session_id: s.session_id }), { has_active: false });

  // Recalled later as experience, apart from plain memories; context_types picks sections.
  await ok("store_memory", { content: "The kiln firing schedule lives in config/kiln.yaml" });
  const all = await ok("assemble_context", { query: "kiln firing schedule parser", session_id: s.session_id });
  t.match(all.markdown, EXPERIENCES_HEADING);
  t.same(all.experience_ids, [resolved.memory_id]);
  t.notOk(all.memory_ids.includes(resolved.memory_id), "an experience is not listed twice");
  t.ok(all.memory_ids.length >= 1);
  const onlyMemories = await ok("assemble_context", {
    query: "kiln firing schedule parser",
    context_types: ["memories"],
    project: "/work/c",
  });
  t.same(onlyMemories.experience_ids, []);
  t.notMatch(onlyMemories.markdown, EXPERIENCES_HEADING);
  const onlyExperience = await ok("assemble_context", {
    query: "kiln firing schedule parser",
    context_types: ["experiences"],
    project: "/work/c",
  });
  t.same(onlyExperience.memory_ids, []);
  t.same(onlyExperience.experience_ids, [resolved.memory_id]);
  // The experience is the project's (its scope): a request outside the project does not get it.
  const outside = await ok("assemble_context", { query: "kiln firing schedule parser", context_types: ["experiences"] });
  t.same(outside.experience_ids, []);
  // A tight budget is shared: the GHAP section and the rest fit in it together or are cut.
  const tight = await ok("assemble_context", { query: "kiln firing schedule parser", max_tokens: 30 });
  t.ok(tight.token_estimate <= 30);
  t.equal(tight.truncated, true);
  t.match(await errorText("assemble_context", { query: "x", session_id: "no-such-session" }), /No agent session 'no-such-session'/);
});

t.test("tool counts and the check-in", async (t) => {
  const s = await ok("start_session", { project: "/work/d" });
  const ref = { session_id: s.session_id };
  t.match(await ok("should_check_in", { ...ref, frequency: 3 }), { should_check_in: false, tool_count: 0 });
  for (let i = 1; i <= 3; i++) t.match(await ok("increment_tool_count", ref), { tool_count: i, total: i });
  t.match(await ok("should_check_in", { ...ref, frequency: 3 }), { should_check_in: true, tool_count: 3 });
  t.match(await ok("should_check_in", ref), { should_check_in: false, frequency: 10 }, "default frequency 10");
  t.match(await ok("reset_tool_count", ref), { tool_count: 0, total: 3 });
  t.match(await ok("should_check_in", { ...ref, frequency: 3 }), { should_check_in: false, tool_count: 0 });
  t.match(await ok("increment_tool_count", {}), { session_id: s.session_id, tool_count: 1 }, "no ref: the latest open session");
});

t.test(
  "every tool takes the arguments of its signature table: start_session with none opens a session of the default project",
  async (t) => {
    const r = await call("start_session");
    t.notOk(r.isError, "no -32602 for a call without arguments");
    const s = r.structuredContent as any;
    t.match(s, { session_id: String, project: "default", started_at: String, agent: "mcp" });
    t.match(
      r.content.map((c) => (c.type === "text" ? c.text : "")).join(""),
      /the default project "default" \(no project was named\)/,
      "the result says which project",
    );
    t.match(await ok("get_orphaned_ghap"), { has_orphan: Boolean });
    t.match(await ok("increment_tool_count"), { tool_count: 1 });
    t.match(await ok("should_check_in"), { should_check_in: false, frequency: 10 });
    t.match(await ok("reset_tool_count"), { tool_count: 0 });
    t.match(await ok("assemble_context", { query: "flaky tests" }), { markdown: String, token_count: Number });
    t.match(await ok("start_session", { project: "/work/e" }), { project: "/work/e" }, "hooks still name the agent's working directory");
  },
);

t.test("bad input is an error result that writes nothing", async (t) => {
  const before = (await pool.query("select (select count(*) from ghap)::int as g, (select count(*) from agent_sessions)::int as s"))
    .rows[0];
  const bad = [
    ["start_session", { project: "" }],
    ["set_ghap", { goal: "g", hypothesis: "h", action: "a" }],
    ["set_ghap", { goal: "x".repeat(4001), hypothesis: "h", action: "a", prediction: "p" }],
    ["resolve_ghap", { outcome: "won" }],
    ["update_ghap", { id: "not-a-uuid" }],
    ["should_check_in", { frequency: 0 }],
    ["assemble_context", { query: "x", context_types: ["dreams"] }],
  ] as const;
  for (const [name, args] of bad) {
    const r = await call(name, args).catch(
      (err: Error) => ({ isError: true, content: [{ type: "text", text: err.message }] }) as CallToolResult,
    );
    t.equal(r.isError, true, `${name} ${JSON.stringify(args).slice(0, 60)}`);
  }
  t.same(
    (await pool.query("select (select count(*) from ghap)::int as g, (select count(*) from agent_sessions)::int as s")).rows[0],
    before,
  );
});

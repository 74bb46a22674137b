/* eslint-disable @typescript-eslint/no-explicit-any -- hook outputs are read as JSON */
// Coding-agent hooks as Claude Code runs them: `psyche hook <event>` as a new process per call
// with Claude Code's input shapes on stdin, and POST /hooks/<event> (HTTP hooks), against a real
// server; then with no server, a server that never answers, and a session-start that brings the
// background server up.
import t from "tap";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { startPsyche } from "../helpers/psyche.js";
import { runCli } from "../helpers/processes.js";
import { serverDir } from "../helpers/testdir.js";
import { until } from "../helpers/until.js";

const BIN = join(packageRoot(), "bin", "psyche.js");
const psyche = await startPsyche(t, { recallPromptTokens: 0, maxTokens: 32, hookCheckInEvery: 3 });
const pool = psyche.db.pool;

async function hook(
  event: string,
  input: unknown,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, "hook", event, ...args], {
    env: { ...process.env, PSYCHE_HOOK_NO_START: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(typeof input === "string" ? input : JSON.stringify(input));
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { code, stdout, stderr };
}
const up = ["--server", psyche.url];
const base = (sessionId: string, event: string) => ({
  session_id: sessionId,
  transcript_path: `/home/u/.claude/projects/p/${sessionId}.jsonl`,
  cwd: "/home/u/kiln",
  permission_mode: "default",
  hook_event_name: event,
});
const claude = (r: { stdout: string }) =>
  JSON.parse(r.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };

t.test("the five hooks with the server up, in Claude Code's format", async (t) => {
  const sid = "5f1c7a52-claude-one";
  const start = await hook("session-start", { ...base(sid, "SessionStart"), source: "startup" }, up);
  t.equal(start.code, 0);
  t.match(claude(start).hookSpecificOutput, {
    hookEventName: "SessionStart",
    additionalContext: /Psyche \(long-term memory\) is following this session as [0-9a-f-]{36}/,
  });
  const session = (await pool.query("select id::text, project, agent from agent_sessions where external_id = $1", [sid])).rows[0];
  t.match(session, { project: "/home/u/kiln", agent: "claude-code" });

  // A memory and a GHAP for the prompt's context.
  await psyche.web.memory.remember({
    kind: "semantic",
    content: "The kiln controller's firmware is flashed with make flash",
    sourceKind: "api",
  });
  const s = await psyche.web.agents.session({ session_id: sid });
  await psyche.web.agents.set(s, {
    goal: "flash the kiln firmware",
    hypothesis: "the serial port is wrong",
    action: "try ttyUSB1",
    prediction: "make flash succeeds",
  });
  const prompt = await hook("user-prompt-submit", { ...base(sid, "UserPromptSubmit"), prompt: "how do I flash the kiln firmware?" }, up);
  t.equal(prompt.code, 0);
  const ctx = claude(prompt).hookSpecificOutput;
  t.equal(ctx.hookEventName, "UserPromptSubmit");
  t.match(ctx.additionalContext, /current working hypothesis[\s\S]*the serial port is wrong[\s\S]*make flash/);

  // Pre-tool-use: quiet until the check-in is due (every 3 here), then the reminder, then quiet again.
  const pre = (n: number) =>
    hook(
      "pre-tool-use",
      { ...base(sid, "PreToolUse"), tool_name: "Read", tool_input: { file_path: `/home/u/kiln/f${n}.c` }, tool_use_id: `toolu_${n}` },
      up,
    );
  const outs = [];
  for (let i = 1; i <= 4; i++) outs.push(await pre(i));
  t.same(
    outs.map((o) => o.code),
    [0, 0, 0, 0],
  );
  t.same(
    outs.map((o) => o.stdout === ""),
    [true, true, false, true],
  );
  t.match(claude(outs[2]!).hookSpecificOutput, {
    hookEventName: "PreToolUse",
    additionalContext: /GHAP check-in \(3 tool uses[\s\S]*the serial port is wrong/,
  });
  t.match((await pool.query("select tool_count, tools_since_check_in from agent_sessions where external_id = $1", [sid])).rows[0], {
    tool_count: 4,
    tools_since_check_in: 1,
  });

  // Post-tool-use: a test run's result becomes a suggested resolution; other tools say nothing.
  const bash = (command: string, stdout: string) =>
    hook(
      "post-tool-use",
      {
        ...base(sid, "PostToolUse"),
        tool_name: "Bash",
        tool_input: { command, description: "run" },
        tool_response: { stdout, stderr: "", interrupted: false, isImage: false },
      },
      up,
    );
  const passed = await bash("npm test", "Tests: 12 passed, 12 total");
  t.match(claude(passed).hookSpecificOutput.additionalContext, /Tests PASSED[\s\S]*resolve_ghap with outcome confirmed/);
  const failed = await bash("pytest -q", "FAILED tests/test_flash.py::test_port\n1 failed, 11 passed in 0.4s");
  t.match(claude(failed).hookSpecificOutput.additionalContext, /Tests FAILED[\s\S]*outcome falsified/);
  t.equal((await bash("ls -la", "total 0")).stdout, "", "not a test run: nothing");
  t.equal(
    (await hook("post-tool-use", { ...base(sid, "PostToolUse"), tool_name: "Read", tool_input: {}, tool_response: {} }, up)).stdout,
    "",
  );

  const end = await hook("session-end", { ...base(sid, "SessionEnd"), reason: "prompt_input_exit" }, up);
  t.match(end, { code: 0, stdout: "" });
  t.match(
    (await pool.query("select end_reason, ended_at is not null as ended from agent_sessions where external_id = $1", [sid])).rows[0],
    { end_reason: "prompt_input_exit", ended: true },
  );

  // The GHAP left active is the next session's orphan.
  const next = await hook("session-start", { ...base("5f1c7a52-claude-two", "SessionStart"), source: "startup" }, up);
  t.match(claude(next).hookSpecificOutput.additionalContext, /Orphaned GHAP detected[\s\S]*flash the kiln firmware/);
});

t.test("--format typed: seed 004's results", async (t) => {
  const sid = "typed-session";
  const typed = async (event: string, input: object) =>
    JSON.parse((await hook(event, { ...base(sid, event), ...input }, [...up, "--format", "typed"])).stdout);
  t.match(await typed("session-start", { source: "startup" }), {
    type: /^(session_started|orphan_detected)$/,
    session_id: /^[0-9a-f-]{36}$/,
  });
  t.match(await typed("user-prompt-submit", { prompt: "kiln firmware flash" }), { type: "rich", content: /kiln/, token_count: Number });
  t.match(await typed("user-prompt-submit", { prompt: "zzyzx qwertyuiop" }), { type: /^(none|rich)$/ });
  t.match(await typed("pre-tool-use", { tool_name: "Edit", tool_input: {} }), { type: "none" });
  t.match(
    await typed("post-tool-use", {
      tool_name: "Bash",
      tool_input: { command: "cargo test" },
      tool_response: { stdout: "test result: FAILED. 3 passed; 1 failed" },
    }),
    {
      type: "outcome",
      passed: false,
      suggested_action: "set_ghap",
    },
  );
  t.match(await typed("session-end", { reason: "clear" }), { type: "session_ended" });
  // Plain text on stdin is a prompt.
  const plain = await hook("user-prompt-submit", "kiln firmware", [...up, "--format", "typed"]);
  t.match(JSON.parse(plain.stdout), { type: "rich" });
});

t.test("POST /hooks/<event>: HTTP hooks, and what they refuse", async (t) => {
  const post = (event: string, body: string, query = "") =>
    fetch(`${psyche.url}/hooks/${event}${query}`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const res = await post("session-start", JSON.stringify({ ...base("http-session", "SessionStart"), source: "startup" }));
  t.equal(res.status, 200);
  t.match(await res.json(), { hookSpecificOutput: { hookEventName: "SessionStart" } });
  const typed = await post("pre-tool-use", JSON.stringify({ ...base("http-session", "PreToolUse"), tool_name: "Bash" }), "?format=typed");
  t.match(await typed.json(), { type: "none" });
  const end = await post("session-end", JSON.stringify(base("http-session", "SessionEnd")));
  t.same(await end.json(), {}, "nothing for Claude Code to read");

  const sessions = async () => (await pool.query("select count(*)::int as n from agent_sessions")).rows[0].n as number;
  const before = await sessions();
  const refused = [
    [await post("stop", "{}"), 404, /No hook 'stop'/],
    [await post("user-prompt-submit", "{}"), 400, /prompt/],
    [await post("user-prompt-submit", "not json"), 400, /not valid JSON/],
    [await post("pre-tool-use", JSON.stringify({ session_id: "x".repeat(300), tool_name: "Bash" })), 400, /session_id/],
    [await post("session-start", "{}", "?format=xml"), 400, /format/],
  ] as const;
  for (const [r, status, message] of refused) {
    t.equal(r.status, status);
    t.match(((await r.json()) as any).error.message, message);
  }
  t.equal(await sessions(), before, "refused hooks write nothing");
});

t.test("no server, a server that never answers, bad input: exit 0, degraded, never blocking", async (t) => {
  const dead = createServer();
  await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
  const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;
  await new Promise<void>((r) => dead.close(() => r()));
  const slow = createServer(() => undefined);
  await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
  t.teardown(() => {
    slow.closeAllConnections();
    slow.close();
  });
  const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  const input = { ...base("down", "UserPromptSubmit"), prompt: "hello" };

  const down = await hook("user-prompt-submit", input, ["--server", deadUrl]);
  t.match(down, { code: 0, stdout: "" });
  t.match(down.stderr, /degraded \(server_unreachable: ECONNREFUSED\)/);
  t.match(JSON.parse((await hook("user-prompt-submit", input, ["--server", deadUrl, "--format", "typed"])).stdout), {
    type: "degraded",
    reason: /server_unreachable/,
  });

  const started = Date.now();
  const timedOut = await hook("pre-tool-use", { ...base("slow", "PreToolUse"), tool_name: "Bash" }, [
    "--server",
    slowUrl,
    "--format",
    "typed",
    "--timeout-ms",
    "300",
  ]);
  t.match(JSON.parse(timedOut.stdout), { type: "degraded", reason: "timeout" });
  t.equal(timedOut.code, 0);
  t.ok(Date.now() - started < 10_000, "gave up on its own time limit");

  for (const [event, stdin] of [
    ["pre-tool-use", "not json"],
    ["session-start", "[1, 2]"],
  ] as const) {
    const r = await hook(event, stdin, [...up, "--format", "typed"]);
    t.match(r, { code: 0 });
    t.match(JSON.parse(r.stdout), { type: "degraded", reason: /bad_input/ });
  }
  const refused = await hook("pre-tool-use", { tool_name: 42 }, [...up, "--format", "typed"]);
  t.match(JSON.parse(refused.stdout), { type: "degraded", reason: /http_400/ });
  const unknown = await hook("stop", {}, up);
  t.match(unknown, { code: 0, stdout: "" });
  t.match(unknown.stderr, /unknown hook event 'stop'/);
});

t.test("session-start starts the background server when none runs, without waiting for it", async (t) => {
  const dataDir = serverDir(t, "hook-start");
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const port = String((probe.address() as AddressInfo).port);
  await new Promise<void>((r) => probe.close(() => r()));
  // The embedded database on a free port: another test's background server may hold the default one.
  const env = { PSYCHE_DATA_DIR: dataDir, PSYCHE_PORT: port, PSYCHE_DB_PORT: "0", PSYCHE_HOOK_NO_START: "0", PSYCHE_QUIET: "true" };
  t.teardown(() => runCli(["stop", "--data-dir", dataDir], {}));
  const first = await hook("session-start", { ...base("cold", "SessionStart"), source: "startup" }, ["--format", "typed"], env);
  t.match(JSON.parse(first.stdout), { type: "degraded", reason: "server_starting" });
  t.equal(first.code, 0);
  // Its start-up (an embedded database, migrations, a generated model) is slow on a loaded CI
  // machine; when it does not come up, its log says why.
  const status = await until(
    "the background server",
    async () => {
      const s = await runCli(["status", "--data-dir", dataDir], {});
      return s.code === 0 && s.out.includes(`127.0.0.1:${port}`) ? s.out : undefined;
    },
    100_000,
  ).catch((err: Error) => {
    const log = join(dataDir, "logs", "psyche.log");
    throw new Error(`${err.message}; its log:\n${existsSync(log) ? readFileSync(log, "utf8").slice(-4000) : "(none)"}`);
  });
  t.match(status, /Psyche is running: pid \d+/);
  // While it starts, a hook says so; once it listens, the next session reaches it through the PID file.
  const second = await until(
    "a session started on it",
    async () => {
      const r = JSON.parse(
        (await hook("session-start", { ...base("warm", "SessionStart"), source: "startup" }, ["--format", "typed"], env)).stdout,
      );
      return r.type === "degraded" && r.reason === "server_starting" ? undefined : r;
    },
    60_000,
  );
  t.match(second, { type: "session_started" });
});

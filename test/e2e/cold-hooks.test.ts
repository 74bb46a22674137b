/* eslint-disable @typescript-eslint/no-explicit-any -- hook outputs and settings are read as JSON */
// A Claude Code session that opens on a cold server, with the hooks as `psyche install
// claude-code` writes them, each run as Claude Code runs it (its command through a shell, the
// event's JSON on stdin): install starts the server and waits for it; after a stop, session-start
// starts it again in the background without waiting, and the first prompt's hook waits for it,
// then gets the memory context and the report of the GHAP a past session left open (the server
// never saw that session-start).
import t from "tap";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli } from "../helpers/processes.js";

const home = t.testdir();
const project = join(home, "kiln");
mkdirSync(project);
const dataDir = join(home, "data");
const probe = createServer();
await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
const port = (probe.address() as AddressInfo).port;
await new Promise<void>((r) => probe.close(() => r()));
const url = `http://127.0.0.1:${port}`;
// The embedded database on a free port: another test's background server may hold the default one.
const env = { HOME: home, PSYCHE_DATA_DIR: dataDir, PSYCHE_PORT: String(port), PSYCHE_DB_PORT: "0", PSYCHE_QUIET: "true" };
t.teardown(() => runCli(["stop", "--data-dir", dataDir], env));

/** An installed hook, run as Claude Code runs it: its command line through a shell, its input on stdin. */
function runHook(hook: { command: string }, input: object): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawn("sh", ["-c", hook.command], { cwd: project, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(JSON.stringify(input));
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })));
}
const event = (sessionId: string, name: string) => ({ session_id: sessionId, cwd: project, hook_event_name: name });

t.test("install starts the server and waits until it answers", async (t) => {
  const installed = await runCli(["install", "claude-code", "--project"], env, project);
  t.equal(installed.code, 0, installed.out);
  t.match(installed.out, /Psyche is not running: starting it in the background/, "a progress line while it starts");
  t.match(installed.out, new RegExp(`Psyche is running: ${url}`));
  t.equal((await fetch(`${url}/health`)).status, 200, "it answers when install returns");
  const again = await runCli(["install", "claude-code", "--project"], env, project);
  t.notMatch(again.out, /starting it/, "a running server is left as it is");
});

const settings = () => JSON.parse(readFileSync(join(project, ".claude", "settings.json"), "utf8"));
const hookOf = (name: string) => settings().hooks[name][0].hooks[0] as { command: string; timeout: number };

t.test("a cold session: session-start starts the server, the first prompt waits for it and gets its context", async (t) => {
  t.ok(hookOf("UserPromptSubmit").timeout >= 40, "Claude Code gives the prompt hook time to wait");
  // What a past session left: a memory, and a GHAP still open when it ended without a session-end.
  const stored = await fetch(`${url}/v1/memories`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "The kiln controller's firmware is flashed with make flash" }),
  });
  t.equal(stored.status, 201);
  const client = new Client({ name: "cold-hooks-test", version: "0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  const past = (await client.callTool({ name: "start_session", arguments: { project, agent: "claude-code" } })) as any;
  await client.callTool({
    name: "set_ghap",
    arguments: {
      session_id: past.structuredContent.session_id,
      goal: "flash the kiln firmware",
      hypothesis: "the serial port is wrong",
      action: "try ttyUSB1",
      prediction: "make flash succeeds",
    },
  });
  await client.close();
  const stopped = await runCli(["stop"], env);
  t.match(stopped.out, /stopped Psyche/);

  const start = await runHook(hookOf("SessionStart"), { ...event("cold-1", "SessionStart"), source: "startup" });
  t.equal(start.code, 0);
  t.equal(start.stdout, "", "nothing for Claude Code while the server starts");
  t.match(start.stderr, /degraded \(server_starting\)/);
  t.ok(start.ms < 10_000, `session-start did not wait for it (${start.ms} ms)`);

  const prompt = await runHook(hookOf("UserPromptSubmit"), {
    ...event("cold-1", "UserPromptSubmit"),
    prompt: "How do I flash the kiln firmware?",
  });
  t.equal(prompt.code, 0, prompt.stderr);
  const context = JSON.parse(prompt.stdout).hookSpecificOutput;
  t.equal(context.hookEventName, "UserPromptSubmit");
  t.match(context.additionalContext, /make flash/, "the memory context, once the server was up");
  t.match(
    context.additionalContext,
    /Orphaned GHAP detected[\s\S]*the serial port is wrong/,
    "and the orphan, reported by the first hook that reached it",
  );

  const next = await runHook(hookOf("UserPromptSubmit"), {
    ...event("cold-1", "UserPromptSubmit"),
    prompt: "And the kiln firmware again?",
  });
  t.notMatch(JSON.parse(next.stdout).hookSpecificOutput?.additionalContext ?? "", /Orphaned GHAP/, "reported once");
});

t.test("a prompt hook gives up on a server that does not come up in time", async (t) => {
  await runCli(["stop"], env);
  // A PID file that names a live process with no address yet: a server still starting.
  const { writeFileSync } = await import("node:fs");
  const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  t.teardown(() => sleeper.kill());
  writeFileSync(join(dataDir, "psyche.pid"), JSON.stringify({ pid: sleeper.pid, url: null, started_at: new Date().toISOString() }));
  const started = Date.now();
  const r = await runHook(
    { command: `${hookOf("UserPromptSubmit").command} --wait-ms 1500 --format typed` },
    {
      ...event("cold-2", "UserPromptSubmit"),
      prompt: "hello",
    },
  );
  t.equal(r.code, 0);
  t.match(JSON.parse(r.stdout), { type: "degraded", reason: "server_starting" });
  t.ok(Date.now() - started >= 1500, "it waited its time");
  t.ok(Date.now() - started < 10_000, "and no longer");
});

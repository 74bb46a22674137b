// `psyche hook <event>`: a coding agent's command hook (agents/claude-code-settings.ts installs
// them). It relays the hook's JSON on stdin to the running server (POST /hooks/<event>,
// src/http/routes/hooks.ts, which validates it) and prints what the agent reads. It must never
// hold the agent up or fail it: no server, a timeout or an error prints a `degraded` result
// with `--format typed`, nothing in Claude Code's format, and exits 0, with the reason on
// stderr. `session-start` starts the server in the background when none runs (not waiting for
// it); `user-prompt-submit` waits for a server that is starting (its PID file has no address
// yet), up to `--wait-ms`, so the first prompts after a cold start get their context; the other
// hooks do not hold the agent up for it. A new process runs per call, so this file loads only
// Node's own modules.
import { spawn } from "node:child_process";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { homedir } from "node:os";
import { join } from "node:path";
import { serverFromPidFile as fromPidFile } from "../paths.js";
import { HOOK_EVENTS, HOOK_FIRST_ANSWER_MS, HOOK_WAIT_MS, type HookEvent } from "../agents/hook-events.js";
import { claudeOutput } from "../agents/hook-output.js";
import type { HookResult } from "../agents/hook-input.js";

const USAGE =
  "usage: psyche hook <session-start|user-prompt-submit|pre-tool-use|post-tool-use|session-end> [--format claude|typed] [--server URL] [--data-dir DIR] [--timeout-ms N] [--wait-ms N]";

/** Hook input beyond this is trimmed (long tool output): the server needs a summary, not all of it. */
const MAX_INPUT = 256 * 1024;
const KEEP_STRING = 16 * 1024;

interface HookArgs {
  event: HookEvent;
  format: "claude" | "typed";
  server: string | undefined;
  dataDir: string;
  timeoutMs: number;
  /** How long user-prompt-submit waits for a starting server. */
  waitMs: number;
}

function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv): HookArgs | string {
  const [event, ...rest] = argv;
  if (!event || !(HOOK_EVENTS as readonly string[]).includes(event)) return `unknown hook event '${event ?? ""}'; ${USAGE}`;
  const args: HookArgs = {
    event: event as HookEvent,
    format: "claude",
    server: env.PSYCHE_SERVER_URL || undefined,
    dataDir: env.PSYCHE_DATA_DIR || join(homedir(), ".psyche"),
    timeoutMs: Number(env.PSYCHE_HOOK_TIMEOUT_MS || 2000),
    waitMs: Number(env.PSYCHE_HOOK_WAIT_MS || HOOK_WAIT_MS),
  };
  for (let i = 0; i < rest.length; i++) {
    const [flag, inline] = rest[i]!.split(/=(.*)/s, 2) as [string, string | undefined];
    const value = () => inline ?? rest[++i] ?? "";
    if (flag === "--format") {
      const f = value();
      if (f !== "claude" && f !== "typed") return `--format must be claude or typed, not '${f}'`;
      args.format = f;
    } else if (flag === "--server") args.server = value();
    else if (flag === "--data-dir") args.dataDir = value();
    else if (flag === "--timeout-ms") args.timeoutMs = Number(value());
    else if (flag === "--wait-ms") args.waitMs = Number(value());
    else return `unknown option '${flag}'; ${USAGE}`;
  }
  if (!Number.isFinite(args.timeoutMs) || args.timeoutMs <= 0)
    return "--timeout-ms (PSYCHE_HOOK_TIMEOUT_MS) must be a positive number of milliseconds";
  if (!Number.isFinite(args.waitMs) || args.waitMs < 0)
    return "--wait-ms (PSYCHE_HOOK_WAIT_MS) must be a number of milliseconds, 0 or more";
  return args;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Long strings (a test run's whole output) keep their head and tail. */
function trim(value: unknown): unknown {
  if (typeof value === "string" && value.length > KEEP_STRING)
    return `${value.slice(0, KEEP_STRING / 4)}\n[... ${value.length - KEEP_STRING} characters left out ...]\n${value.slice(-(KEEP_STRING * 3) / 4)}`;
  if (Array.isArray(value)) return value.map(trim);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trim(v)]));
  return value;
}

/**
 * Starts `psyche start` detached, not waiting for the server: the agent's session goes on
 * meanwhile. It waits (a few seconds at most) for the PID file `start` writes first, which says
 * a server is starting: Claude Code runs the prompt's hook right after session-start's
 * (`claude -p`), and that hook waits for a starting server only when it can see one.
 */
async function startServer(dataDir: string): Promise<void> {
  const cli = process.argv[1]!;
  const child = spawn(process.execPath, [cli, "start", "--data-dir", dataDir], { detached: true, stdio: "ignore", env: process.env });
  child.unref();
  let exited = false;
  child.once("exit", () => (exited = true));
  const deadline = Date.now() + 5_000;
  while (!exited && "none" in fromPidFile(dataDir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

class Degraded extends Error {}

/** One POST with node:http (fetch would load undici, a good part of this process's start-up). */
function post(url: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  const request = u.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...(process.env.PSYCHE_API_KEY ? { authorization: `Bearer ${process.env.PSYCHE_API_KEY}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error(`no answer in ${timeoutMs} ms`), { name: "TimeoutError" })),
      timeoutMs,
    );
    req.on("close", () => clearTimeout(timer));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * The server as its PID file names it; for user-prompt-submit, once a starting one has its
 * address (or is gone), within `waitMs`. Undefined with a server still starting.
 */
async function serverOf(args: HookArgs): Promise<{ pid: ReturnType<typeof fromPidFile>; waited: boolean } | undefined> {
  let pid = fromPidFile(args.dataDir);
  if (!("starting" in pid)) return { pid, waited: false };
  if (args.event !== "user-prompt-submit") return undefined;
  const deadline = Date.now() + args.waitMs;
  while ("starting" in pid && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    pid = fromPidFile(args.dataDir);
  }
  return "starting" in pid ? undefined : { pid, waited: true };
}

async function relay(args: HookArgs, body: string): Promise<HookResult> {
  const found = args.server ? { pid: undefined, waited: false } : await serverOf(args);
  if (!found) return { type: "degraded", reason: "server_starting" };
  const { pid, waited } = found;
  const base = (args.server ?? (pid && "url" in pid ? pid.url : `http://127.0.0.1:${process.env.PSYCHE_PORT || 8741}`)).replace(/\/+$/, "");
  let res: { status: number; text: string };
  try {
    res = await post(
      `${base}/hooks/${args.event}?format=typed`,
      body,
      waited ? Math.max(args.timeoutMs, HOOK_FIRST_ANSWER_MS) : args.timeoutMs,
    );
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.name === "TimeoutError") return { type: "degraded", reason: "timeout" };
    if (e.code === "ECONNREFUSED" && args.event === "session-start" && !args.server && process.env.PSYCHE_HOOK_NO_START !== "1") {
      await startServer(args.dataDir);
      return { type: "degraded", reason: "server_starting" };
    }
    return { type: "degraded", reason: `server_unreachable: ${e.code ?? e.message}` };
  }
  const text = res.text;
  if (res.status < 200 || res.status >= 300) {
    let message = text.slice(0, 300);
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      // not JSON: the text as it is
    }
    throw new Degraded(`http_${res.status}: ${message}`);
  }
  return JSON.parse(text) as HookResult;
}

export async function hookCommand(argv: readonly string[]): Promise<void> {
  const args = parseArgs(argv, process.env);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  if (typeof args === "string") {
    process.stderr.write(`psyche hook: ${args}\n`);
    return;
  }
  let result: HookResult;
  try {
    const raw = await readStdin();
    let input: unknown = {};
    if (raw.trim()) {
      try {
        input = JSON.parse(raw);
      } catch {
        // A prompt given as plain text (other agents, or a person trying it).
        input = args.event === "user-prompt-submit" ? { prompt: raw } : undefined;
      }
    }
    if (typeof input !== "object" || input === null || Array.isArray(input))
      throw new Degraded("bad_input: the hook input is not a JSON object");
    const body = JSON.stringify(raw.length > MAX_INPUT ? trim(input) : input);
    result = await relay(args, body);
  } catch (err) {
    result = { type: "degraded", reason: err instanceof Degraded ? err.message : `error: ${(err as Error).message}` };
  }
  if (result.type === "degraded") process.stderr.write(`psyche hook ${args.event}: degraded (${result.reason})\n`);
  if (args.format === "typed") print(JSON.stringify(result));
  else {
    const out = claudeOutput(args.event, result);
    if (out.hookSpecificOutput) print(JSON.stringify(out));
  }
}

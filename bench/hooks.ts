// Hook latency as Claude Code sees it (targets: p95 under 100 ms as a process, 20 ms over HTTP): each command hook
// a new `psyche hook <event>` process from spawn to exit, and each HTTP hook one POST to
// /hooks/<event>, against a warm server holding 10k memories. The server runs in this process;
// the hook processes are the machine's own, so their start-up is measured whole.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../src/config.js";
import { loadConfig } from "../src/config.js";
import type { HookEvent } from "../src/agents/hook-events.js";
import type { Logger } from "../src/log.js";
import { packageRoot } from "../src/paths.js";
import { serve } from "../src/processes/serve.js";
import { load, percentile } from "./memory.js";
import { random, syntheticQuery } from "./synthetic-memories.js";

export interface HooksBenchResult {
  memories: number;
  processRuns: number;
  httpCalls: number;
  processMs: Partial<Record<HookEvent, { p50: number; p95: number }>>;
  httpMs: Partial<Record<HookEvent, { p50: number; p95: number }>>;
}

const BIN = join(packageRoot(), "bin", "psyche.js");
const stats = (xs: number[]) => ({ p50: percentile(xs, 50), p95: percentile(xs, 95) });

function input(event: HookEvent, i: number, query: string): Record<string, unknown> {
  const base = { session_id: `bench-${event}-${i % 5}`, cwd: "/home/user/project", hook_event_name: event };
  if (event === "session-start") return { ...base, session_id: `bench-start-${i}`, source: "startup" };
  if (event === "user-prompt-submit") return { ...base, prompt: query };
  if (event === "pre-tool-use") return { ...base, tool_name: "Read", tool_input: { file_path: "/home/user/project/src/a.ts" } };
  if (event === "post-tool-use")
    return {
      ...base,
      tool_name: "Bash",
      tool_input: { command: "npm test" },
      tool_response: { stdout: "Tests: 12 passed, 12 total", stderr: "" },
    };
  return { ...base, reason: "other" };
}

function runHook(url: string, event: HookEvent, body: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "hook", event, "--server", url], { stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", reject);
    child.on("exit", () => resolve(performance.now() - started));
    child.stdin.end(body);
  });
}

export async function benchHooks(
  base: Config,
  log: Logger,
  memories: number,
  processRuns: number,
  httpCalls: number,
): Promise<HooksBenchResult> {
  const dataDir = join(base.dataDir, "hooks");
  rmSync(dataDir, { recursive: true, force: true });
  const config = loadConfig({ ...base, dataDir, embeddingModel: "builtin", recallPromptTokens: 0 }, {});
  const psyche = await serve(config, log);
  const events: HookEvent[] = ["session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use", "session-end"];
  const result: HooksBenchResult = { memories, processRuns, httpCalls, processMs: {}, httpMs: {} };
  try {
    await load(psyche.db.pool, psyche.mem.embedder, psyche.mem.memory, memories, 13);
    await psyche.db.pool.query("analyze memories");
    const r = random(7);
    for (const event of events) {
      for (let i = 0; i < 5; i++) await runHook(psyche.url, event, JSON.stringify(input(event, i, syntheticQuery(r))));
      const times: number[] = [];
      for (let i = 0; i < processRuns; i++)
        times.push(await runHook(psyche.url, event, JSON.stringify(input(event, i, syntheticQuery(r)))));
      result.processMs[event] = stats(times);
      const http: number[] = [];
      for (let i = 0; i < httpCalls + 10; i++) {
        const body = JSON.stringify(input(event, i + 1000, syntheticQuery(r)));
        const t = performance.now();
        const res = await fetch(`${psyche.url}/hooks/${event}`, { method: "POST", headers: { "content-type": "application/json" }, body });
        await res.text();
        if (!res.ok) throw new Error(`POST /hooks/${event}: ${res.status}`);
        if (i >= 10) http.push(performance.now() - t);
      }
      result.httpMs[event] = stats(http);
      process.stderr.write(
        `  ${event}: process p95 ${result.processMs[event]!.p95.toFixed(1)} ms, HTTP p95 ${result.httpMs[event]!.p95.toFixed(1)} ms\n`,
      );
    }
  } finally {
    await psyche.stop();
  }
  return result;
}

// Runs the compiled CLI as real OS processes (npm test builds dist/ first).
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

export const CLI = join(packageRoot(), "dist", "src", "cli.js");

export interface Proc {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

/**
 * What a test's Psyche process runs on unless the test says otherwise: the CPU, and the tiny
 * model (npm start's default, tiny-qwen3, is a family's model: tests that need one ask for it).
 */
const TEST_DEFAULTS = { PSYCHE_GPU: "false", PSYCHE_MODEL: "tiny" };

/** Starts `psyche <args>` and waits until a stdout line matches `ready`; returns the match. */
export async function startCli(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<Proc & { match: RegExpExecArray }> {
  // The CPU and the tiny model unless a test says otherwise, as in test/helpers/psyche.ts and test-config.ts.
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...TEST_DEFAULTS, ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | string>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal ?? "?")));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`psyche ${args[0]} not ready in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = () => {
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`psyche ${args[0]} exited (${code}) before it was ready:\n${out}`));
    });
  });
  return { child, output: () => out, exited, match };
}

export async function runCli(args: string[], env: Record<string, string>, cwd?: string): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PSYCHE_MODEL: TEST_DEFAULTS.PSYCHE_MODEL, ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(cwd ? { cwd } : {}),
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { code, out };
}

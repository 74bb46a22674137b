// The soak's processes: `psyche web` and `psyche inference` as real OS processes (the compiled
// CLI, as a Procfile runs them), which the soak kills with SIGKILL and starts again.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

export const CLI = join(packageRoot(), "dist", "src", "cli.js");

export interface Role {
  readonly name: string;
  /** Starts it and waits for its ready line; throws with its output if it exits first. */
  start(): Promise<void>;
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  readonly running: boolean;
  /** The last few KB it wrote, across its restarts (for a failed soak's report). */
  tail(): string;
}

const TAIL_BYTES = 8192;

export function role(name: string, args: string[], env: Record<string, string>, ready: RegExp, timeoutMs = 60_000): Role {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let tail = "";
  const keep = (d: Buffer | string) => {
    tail = (tail + String(d)).slice(-TAIL_BYTES);
  };
  const start = async () => {
    keep(`--- ${name} started\n`);
    const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    let out = "";
    exited = new Promise((resolve) => proc.on("exit", () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} not ready in ${timeoutMs} ms:\n${out.slice(-2000)}`)), timeoutMs);
      const onData = (d: Buffer) => {
        out += d;
        if (ready.test(out)) {
          clearTimeout(timer);
          // Keep reading (a full pipe would stall it), and only the tail of the text.
          keep(out);
          out = "";
          proc.stdout!.off("data", onData);
          proc.stderr!.off("data", onData);
          proc.stdout!.on("data", keep);
          proc.stderr!.on("data", keep);
          resolve();
        }
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.on("data", onData);
      proc.on("exit", (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${out.slice(-2000)}`));
      });
    });
  };
  return {
    name,
    start,
    async kill() {
      child?.kill("SIGKILL");
      await exited;
      child = undefined;
    },
    async stop(graceMs = 20_000) {
      if (!child) return;
      const proc = child;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
      child = undefined;
    },
    tail: () => tail,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
  };
}

// Runs Hermes as the user would: `psyche chat ...` through the installed bin (bin/psyche.js),
// a real OS process, stdout and stderr apart.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";

export const PSYCHE_BIN = join(packageRoot(), "bin", "psyche.js");
export const HERMES_BIN = join(packageRoot(), "bin", "hermes.js");

export async function runHermes(
  args: string[],
  o: { cwd: string; env?: Record<string, string>; bin?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const argv = o.bin ? [o.bin, ...args] : [PSYCHE_BIN, "chat", ...args];
  // No PSYCHE_* settings from the test's environment: each test says what it means.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PSYCHE_")));
  const child = spawn(process.execPath, argv, { cwd: o.cwd, env: { ...env, ...o.env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  return { code, stdout, stderr };
}

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package root (where package.json and migrations/ are), from src/ or dist/src/ alike. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "migrations"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find Psyche's package root (package.json beside migrations/)");
    dir = up;
  }
}

export type FoundServer = { url: string } | { starting: true } | { none: true };

/**
 * The server the PID file names (`psyche start`, processes/daemon.ts), if its process lives.
 * Read by light entry points (a hook, Hermes) that must not load the daemon's imports.
 */
export function serverFromPidFile(dataDir: string): FoundServer {
  try {
    const file = JSON.parse(readFileSync(join(dataDir, "psyche.pid"), "utf8")) as { pid?: unknown; url?: unknown };
    if (typeof file.pid !== "number") return { none: true };
    process.kill(file.pid, 0);
    return typeof file.url === "string" ? { url: file.url } : { starting: true };
  } catch {
    return { none: true };
  }
}

// `psyche start | stop | status | logs`: Psyche as a background server that coding-agent hooks
// and tools reach over HTTP (docs/configuration.md, `start`). The PID file
// (<data-dir>/psyche.pid, 0600) holds the server's pid and URL; the server writes it once it
// listens and removes it when it stops (claimPidFile). One that names a dead process, or a live
// one that is not a Psyche server (its pid reused), is stale: cleaned up with a note, never
// trusted or signalled. The server's output goes to <data-dir>/logs/psyche.log,
// which each start rotates once it has grown past LOG_ROTATE_BYTES.
import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { Config } from "../config.js";
import { processAlive } from "../db/pid-lock.js";
import { UserError } from "../errors.js";
import { PSYCHE_VERSION } from "../version.js";

const LOG_ROTATE_BYTES = 10 * 1024 * 1024;

const PidFileSchema = z.object({
  pid: z.number().int().positive(),
  url: z.string().nullable(),
  started_at: z.string(),
  version: z.string(),
  starting: z.boolean().optional(),
});
export type PidFile = z.infer<typeof PidFileSchema>;

export const pidPath = (dataDir: string) => join(dataDir, "psyche.pid");
export const logPath = (dataDir: string) => join(dataDir, "logs", "psyche.log");

/**
 * Whether `pid` is a Psyche server (`psyche serve`, by `psyche start`, `npm start` or by hand),
 * by its command line; undefined where the system does not say (no /proc).
 */
export function isPsycheServer(pid: number): boolean | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return existsSync("/proc/self/cmdline") ? false : undefined;
  }
  const args = raw.split("\0").filter(Boolean);
  return args.includes("serve") && args.some((a) => /(^|\/)(cli\.js|psyche(\.cjs|\.js)?)$/.test(a));
}

/** Why a PID file's process is not the server it names: dead, or a pid reused by another program. */
export const staleReason = (pid: number) => (processAlive(pid) ? `pid ${pid} is not a Psyche server` : `pid ${pid} is not running`);

/** What the PID file says, and whether its process is a live Psyche server; undefined when there is none. */
export function readPidFile(
  dataDir: string,
): { file: PidFile; alive: boolean } | { file: null; alive: false; unreadable: string } | undefined {
  let text: string;
  try {
    text = readFileSync(pidPath(dataDir), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  let parsed;
  try {
    parsed = PidFileSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success) return { file: null, alive: false, unreadable: text.slice(0, 80) };
  const pid = parsed.data.pid;
  // While `psyche start` starts the server, the file names the starting command itself.
  return { file: parsed.data, alive: processAlive(pid) && (parsed.data.starting === true || isPsycheServer(pid) !== false) };
}

/**
 * Writes the PID file whole or not at all: a reader (`psyche status`, a hook, the server's own
 * claim) never sees it empty or half written, as it could between a create and its write.
 * `exclusive` fails with EEXIST where one is there, as a "wx" open would.
 */
function writePidFile(dataDir: string, file: PidFile, exclusive = false): void {
  const path = pidPath(dataDir);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(file)}\n`, { mode: 0o600 });
  try {
    if (exclusive) linkSync(temp, path);
    else renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * The server's own claim, once it listens: its pid and URL in the PID file, unless another live
 * Psyche server holds it. Returns the release, which removes the file if it still names this
 * process: call it on every exit the process sees.
 */
export function claimPidFile(dataDir: string, url: string): () => void {
  const held = readPidFile(dataDir);
  if (held?.alive && held.file.pid !== process.pid && held.file.pid !== process.ppid) return () => undefined;
  mkdirSync(dataDir, { recursive: true });
  writePidFile(dataDir, { pid: process.pid, url, started_at: new Date().toISOString(), version: PSYCHE_VERSION });
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    if (readPidFile(dataDir)?.file?.pid === process.pid) removePidFile(dataDir);
  };
  process.once("exit", release);
  return release;
}

function removePidFile(dataDir: string): void {
  try {
    unlinkSync(pidPath(dataDir));
  } catch {
    // already gone
  }
}

/** The last `n` lines of the log from byte `from` on. */
function logTail(path: string, from: number, n = 20): string {
  try {
    return readFileSync(path, "utf8").slice(from).trimEnd().split("\n").slice(-n).join("\n");
  } catch {
    return "(no log)";
  }
}

export interface StartResult {
  pid: number;
  url: string;
  log: string;
  /** A note on a stale PID file that was cleaned up. */
  note?: string | undefined;
}

/**
 * Starts `psyche serve` detached, with `serveArgs`, and returns once its /health answers. Two
 * starts never run two servers: the PID file is taken (exclusively) before the server is
 * spawned, and a live holder is refused.
 */
export async function startDaemon(
  config: Config,
  serveArgs: readonly string[],
  opts: { cli: string; timeoutMs?: number },
): Promise<StartResult> {
  mkdirSync(join(config.dataDir, "logs"), { recursive: true });
  let note: string | undefined;
  const existing = readPidFile(config.dataDir);
  if (existing?.alive) {
    throw new UserError(
      `Psyche is already running (pid ${existing.file.pid}${existing.file.url ? `, ${existing.file.url}` : ""}): \`psyche stop\` first`,
      { exitCode: 1 },
    );
  }
  if (existing) {
    note = existing.file ? `removed a stale PID file (${staleReason(existing.file.pid)})` : "removed an unreadable PID file";
    removePidFile(config.dataDir);
  }
  try {
    writePidFile(
      config.dataDir,
      { pid: process.pid, url: null, started_at: new Date().toISOString(), version: PSYCHE_VERSION, starting: true },
      true,
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST")
      throw new UserError("another `psyche start` is starting Psyche right now", { exitCode: 1 });
    throw err;
  }

  const log = logPath(config.dataDir);
  if (existsSync(log) && statSync(log).size > LOG_ROTATE_BYTES) renameSync(log, `${log}.1`);
  const from = existsSync(log) ? statSync(log).size : 0;
  const fd = openSync(log, "a", 0o600);
  const child = spawn(process.execPath, [opts.cli, "serve", ...serveArgs], { detached: true, stdio: ["ignore", fd, fd], env: process.env });
  closeSync(fd);
  let exited: string | undefined;
  child.once("exit", (code, signal) => (exited = signal ?? `code ${code}`));
  const pid = child.pid!;
  writePidFile(config.dataDir, { pid, url: null, started_at: new Date().toISOString(), version: PSYCHE_VERSION });

  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  try {
    for (;;) {
      if (exited)
        throw new UserError(`Psyche exited (${exited}) before it listened. The log's last lines (${log}):\n${logTail(log, from)}`, {
          exitCode: 1,
        });
      const url =
        /Psyche is listening on (http:\/\/\S+) /.exec(logTail(log, from, 200))?.[1] ??
        (config.quiet && config.port ? `http://127.0.0.1:${config.port}` : undefined);
      if (url && (await answers(`${url}/health`))) {
        writePidFile(config.dataDir, { pid, url, started_at: new Date().toISOString(), version: PSYCHE_VERSION });
        child.unref();
        return { pid, url, log, note };
      }
      if (Date.now() > deadline) {
        process.kill(pid, "SIGTERM");
        throw new UserError(
          `Psyche did not answer /health within ${Math.round((opts.timeoutMs ?? 180_000) / 1000)} s; stopped it. The log's last lines (${log}):\n${logTail(log, from)}`,
          { exitCode: 1 },
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    removePidFile(config.dataDir);
    throw err;
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after the grace period; false when nothing was running. */
export async function stopDaemon(config: Config): Promise<{ stopped: boolean; pid?: number; killed?: boolean; note?: string }> {
  const current = readPidFile(config.dataDir);
  if (!current) return { stopped: false };
  if (!current.alive) {
    removePidFile(config.dataDir);
    return {
      stopped: false,
      note: current.file ? `removed a stale PID file (${staleReason(current.file.pid)})` : "removed an unreadable PID file",
    };
  }
  const { pid } = current.file;
  process.kill(pid, "SIGTERM");
  // The server's own shutdown gives each step the grace period plus 15 s (processes/stack.ts).
  const deadline = Date.now() + (config.shutdownGraceSeconds + 20) * 1000;
  while (processAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const killed = processAlive(pid);
  if (killed) process.kill(pid, "SIGKILL");
  removePidFile(config.dataDir);
  return { stopped: true, pid, killed };
}

export interface DaemonStatus {
  running: boolean;
  pid?: number;
  url?: string | null;
  uptimeSeconds?: number;
  version?: string;
  health?: string;
  note?: string;
}

export async function daemonStatus(config: Config): Promise<DaemonStatus> {
  const current = readPidFile(config.dataDir);
  if (!current) return { running: false };
  if (!current.alive)
    return {
      running: false,
      note: current.file
        ? `the PID file is stale (${staleReason(current.file.pid)}; \`psyche start\` cleans it up)`
        : "the PID file is unreadable",
    };
  const { file } = current;
  let health = "not answering";
  let version = file.version;
  if (file.url) {
    try {
      const res = await fetch(`${file.url}/health`, { signal: AbortSignal.timeout(2000) });
      const body = (await res.json()) as { status?: string; version?: string };
      health = body.status ?? String(res.status);
      version = body.version ?? version;
    } catch {
      // not answering
    }
  }
  return {
    running: true,
    pid: file.pid,
    url: file.url,
    uptimeSeconds: Math.round((Date.now() - Date.parse(file.started_at)) / 1000),
    version,
    health,
  };
}

/** Writes the log to `out`; with `follow`, keeps writing what is appended until `signal` aborts. */
export async function showLogs(config: Config, out: (text: string) => void, follow: boolean, signal?: AbortSignal): Promise<void> {
  const path = logPath(config.dataDir);
  if (!existsSync(path)) throw new UserError(`no log yet at ${path}: \`psyche start\` writes it`, { exitCode: 1 });
  let offset = 0;
  const drain = () => {
    const size = statSync(path).size;
    if (size < offset) offset = 0; // rotated
    if (size === offset) return;
    const fd = openSync(path, "r");
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    closeSync(fd);
    offset = size;
    out(buffer.toString("utf8"));
  };
  drain();
  while (follow && !signal?.aborted) {
    await new Promise((r) => setTimeout(r, 250));
    drain();
  }
}

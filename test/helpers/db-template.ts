// A migrated embedded database to copy, made once per test run. Creating a PGlite data directory
// runs initdb in WebAssembly, seconds of CPU, where opening a copy of one takes a fraction of a
// second (docs/developing.md); nearly every test file starts an embedded database. The template
// is made with the product's own steps (the embedded server, the migrations, pg-boss's schema and
// queues) and named for what it was made from, so a new migration or library makes a new one.
import "./wasm-baseline.js";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { createPool } from "../../src/db/pool.js";
import { startQueue } from "../../src/jobs/queue.js";
import { createLogger, type Logger } from "../../src/log.js";
import { packageRoot } from "../../src/paths.js";
import type { Test } from "tap";
import { serverDir } from "./testdir.js";

const root = packageRoot();
const cache = join(root, "node_modules", ".cache", "psyche-tests");

/** Bare: the embedded server's own start (pgvector), nothing of ours; migrated: the migrations and pg-boss's schema too. */
export type TemplateKind = "bare" | "migrated";

/** What a template is made from: the migrations and the versions of the libraries that write it. */
function templateKey(kind: TemplateKind): string {
  const hash = createHash("sha256").update(kind);
  const migrations = join(root, "migrations");
  if (kind === "migrated")
    for (const name of readdirSync(migrations).sort()) hash.update(name).update(readFileSync(join(migrations, name)));
  for (const pkg of ["@electric-sql/pglite", "@electric-sql/pglite-pgvector", "pg-boss"]) {
    hash.update(pkg).update(JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8")).version);
  }
  return hash.digest("hex").slice(0, 16);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** A lock whose maker is gone: its pid is not alive, or it wrote none within a minute. */
function abandoned(lock: string): boolean {
  let holder = 0;
  try {
    holder = Number(readFileSync(join(lock, "pid"), "utf8")) || 0;
  } catch {
    // not written yet, or the lock is gone
  }
  if (holder) return !alive(holder);
  try {
    return Date.now() - statSync(lock).mtimeMs > 60_000;
  } catch {
    return false;
  }
}

async function makeTemplate(target: string, kind: TemplateKind): Promise<void> {
  const work = `${target}.${process.pid}.tmp`;
  rmSync(work, { recursive: true, force: true });
  const log = createLogger("silent");
  const db = await startEmbeddedDatabase({ dataDir: work, port: 0 });
  try {
    if (kind === "migrated") await migrated(db.connectionString, log);
  } finally {
    await db.stop();
  }
  // The data directory alone: the password and the pid lock belong to whoever copies it.
  renameSync(join(work, "pgdata"), target);
  rmSync(work, { recursive: true, force: true });
}

/** The migrations and pg-boss's schema and queues, applied as a process applies them. */
async function migrated(connectionString: string, log: Logger): Promise<void> {
  const pool = createPool(connectionString, 2);
  try {
    await migrate(pool, log);
    const boss = await startQueue({ connectionString, log });
    await boss.stop({ graceful: false, wait: true });
  } finally {
    await pool.end();
  }
}

/**
 * A template's data directory, made here when it does not exist yet. Test files run side by
 * side, so one makes it under a lock (a directory naming its maker) while the others wait.
 */
export async function databaseTemplate(kind: TemplateKind = "migrated"): Promise<string> {
  const target = join(cache, `pgdata-${kind}-${templateKey(kind)}`);
  mkdirSync(cache, { recursive: true });
  const lock = `${target}.lock`;
  for (;;) {
    if (existsSync(target)) return target;
    try {
      mkdirSync(lock);
    } catch {
      if (abandoned(lock)) rmSync(lock, { recursive: true, force: true });
      await sleep(100);
      continue;
    }
    try {
      writeFileSync(join(lock, "pid"), String(process.pid));
      if (!existsSync(target)) await makeTemplate(target, kind);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Gives `dataDir` a copy of a template's database, unless it has one of its own already. */
export async function seedDatabase(dataDir: string, kind: TemplateKind = "migrated"): Promise<void> {
  const pgdata = join(dataDir, "pgdata");
  if (existsSync(pgdata)) return;
  const template = await databaseTemplate(kind);
  mkdirSync(dataDir, { recursive: true });
  // cp copies its thousand files some four times as fast as fs.cpSync; where there is none, cpSync.
  try {
    execFileSync("cp", ["-a", template, pgdata], { stdio: "ignore" });
  } catch {
    rmSync(pgdata, { recursive: true, force: true });
    cpSync(template, pgdata, { recursive: true });
  }
}

/** A data directory under `t`'s, holding a copy of a template's database: for a test that starts the embedded server itself. */
export async function seededDir(t: Test, kind: TemplateKind = "migrated"): Promise<string> {
  const dir = serverDir(t);
  await seedDatabase(dir, kind);
  return dir;
}

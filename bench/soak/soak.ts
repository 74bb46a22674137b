// A soak with faults: the database, `psyche web` and `psyche inference` as separate processes,
// clients streaming and continuing conversations and using memory, while the web and inference
// processes are killed (SIGKILL) at random moments and started again. Then the clients stop, the
// processes settle, and the invariants are read from the database (bench/soak/invariants.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPool } from "../../src/db/pool.js";
import { emptyLog, runClient, type ClientLog } from "./clients.js";
import { checkInvariants, type Invariants } from "./invariants.js";
import { role, type Role } from "./processes.js";
import { databaseUrl } from "../../src/processes/database-url.js";

export interface SoakOptions {
  seconds: number;
  clients: number;
  /** A real Postgres (a database of its own); without it, `psyche db` on the embedded one. */
  databaseUrl?: string | undefined;
  /** Kills come every `killEveryMs` on average (uniform between half and one and a half of it). */
  killEveryMs: number;
  /** Progress lines. */
  say?: (line: string) => void;
}

/** What the clients counted (but their replies, counted here), with the kills and the invariants. */
export interface SoakResult extends Omit<ClientLog, "replies"> {
  database: "embedded" | "postgres";
  seconds: number;
  clients: number;
  kills: { inference: number; web: number };
  replies: number;
  streamed: number;
  resumed: number;
  invariants: Invariants;
  /** The tail of what the web and inference processes wrote, across their restarts. */
  logs: { web: string; inference: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The longest the kills wait for the first reply. */
const WARM_MAX_MS = 30_000;

export async function soak(o: SoakOptions): Promise<SoakResult> {
  const say = o.say ?? (() => undefined);
  const dataDir = mkdtempSync(join(tmpdir(), "psyche-soak-"));
  const started: Role[] = [];
  const env: Record<string, string> = {
    PSYCHE_DATA_DIR: dataDir,
    PSYCHE_LOG_LEVEL: "warn",
    PSYCHE_POLL_MS: "100",
    PSYCHE_HEARTBEAT_MS: "500",
    PSYCHE_THREADS: "1",
    PSYCHE_DREAM_DELAY_SECONDS: "2",
    PSYCHE_WAKE_LOCK_SECONDS: "1",
    PSYCHE_SHUTDOWN_GRACE_SECONDS: "5",
  };
  try {
    if (o.databaseUrl) env.DATABASE_URL = o.databaseUrl;
    else {
      // The embedded database: web and inference find it by the data directory and this port.
      env.PSYCHE_DB_PORT = String(await freePort());
      const db = role("db", ["db"], env, /postgresql:\/\/\S+/);
      await db.start();
      started.push(db);
    }
    const migrate = role("migrate", ["migrate"], env, /applied|up to date/);
    await migrate.start();
    const port = await freePort();
    const web = role("web", ["web", "--port", String(port)], env, /listening on http/);
    const inference = role("inference", ["inference"], env, /inference worker \S+ running/);
    await web.start();
    await inference.start();
    started.push(web, inference);
    const url = `http://127.0.0.1:${port}`;
    say(
      `soak: ${o.clients} clients for ${o.seconds} s on ${o.databaseUrl ? "PostgreSQL" : "the embedded database"}, a kill every ~${Math.round(o.killEveryMs / 1000)} s`,
    );

    const log: ClientLog = emptyLog();
    const stopClients = new AbortController();
    const clients = Array.from({ length: o.clients }, (_, index) => runClient({ url, index, signal: stopClients.signal, log }));
    const kills = { inference: 0, web: 0 };
    // The kills start once a reply has come back (bounded): on a busy machine the first turns
    // (threads starting, the first recall) can take longer than a kill's interval, and a soak
    // whose web was killed before anything answered tested nothing (it read 0 replies so in CI).
    const warm = Date.now() + WARM_MAX_MS;
    while (log.replies.length === 0 && Date.now() < warm) await sleep(100);
    const until = Date.now() + o.seconds * 1000;
    // On a busy machine restarts eat the time: at least two kills, however long they take (bounded).
    const minKills = Math.min(2, Math.floor((o.seconds * 1000) / o.killEveryMs));
    const latest = until + o.seconds * 2000;
    while (Date.now() < until || (kills.inference + kills.web < minKills && Date.now() < latest)) {
      // Each restarted process gets at least half an interval before the next kill, past `until` too.
      await sleep(Math.min(Math.max(until - Date.now(), o.killEveryMs / 2), o.killEveryMs * (0.5 + Math.random())));
      const victim = Math.random() < 0.5 ? inference : web;
      await victim.kill();
      kills[victim === inference ? "inference" : "web"]++;
      await sleep(200 + Math.random() * 1500);
      await victim.start();
      say(`soak: killed and restarted ${victim.name} (${kills.inference + kills.web} kills, ${log.replies.length} replies so far)`);
    }
    stopClients.abort();
    await Promise.all(clients);
    await settle(url);
    const pool = createPool(databaseUrl({ databaseUrl: o.databaseUrl, dbPort: Number(env.PSYCHE_DB_PORT ?? 0), dataDir }), 2);
    try {
      await drained(pool);
      const invariants = await checkInvariants(pool, log);
      const { replies, ...counts } = log;
      return {
        ...counts,
        database: o.databaseUrl ? "postgres" : "embedded",
        seconds: o.seconds,
        clients: o.clients,
        kills,
        replies: replies.length,
        streamed: replies.filter((r) => r.streamed).length,
        resumed: replies.filter((r) => r.resumed).length,
        invariants,
        logs: { web: web.tail(), inference: inference.tail() },
      };
    } finally {
      await pool.end();
    }
  } finally {
    for (const r of started.reverse()) await r.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * No more dreaming (it would start in the quiet after the clients), and any dream woken. No
 * consolidation either: the minute's maintenance tick runs the first one whenever it comes, and
 * one starting after the soak drained read as a journal entry left running.
 */
async function settle(url: string): Promise<void> {
  const patched = await fetch(`${url}/dream/config`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ enabled: false, consolidation: false }),
  });
  if (!patched.ok) throw new Error(`soak: turning dreams off failed: ${patched.status} ${await patched.text()}`);
  await fetch(`${url}/dream/wake`, { method: "POST" });
}

/** How long nothing may be busy before the soak counts what is left: a tick that read the settings before settle acts within it. */
const QUIET_MS = 1500;

/** Waits until no turn is queued or running and no inference job or journal entry is under way, for QUIET_MS (at most 3 minutes). */
async function drained(pool: ReturnType<typeof createPool>): Promise<void> {
  const deadline = Date.now() + 180_000;
  let quietSince: number | undefined;
  while (Date.now() < deadline) {
    const r = await pool.query<{ busy: number }>(
      `select (select count(*) from turns where status in ('queued', 'running'))
            + (select count(*) from pgboss.job where name = 'psyche-inference' and state in ('created', 'retry', 'active'))
            + (select count(*) from dream_journal where status = 'dreaming') as busy`,
    );
    if (Number(r.rows[0]!.busy) > 0) quietSince = undefined;
    else if ((quietSince ??= Date.now()) <= Date.now() - QUIET_MS) return;
    await sleep(250);
  }
}

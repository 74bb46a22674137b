// Psyche against llama-server from the same llama.cpp (bench/llama-server.ts), on the same
// model, threads and prompts, each as its own process on a free port, measured alternately
// (llama-server, then Psyche, measure by measure) so that a noisy moment hits both. Psyche runs
// with its defaults but for what the measure compares: "bare" (no persona, no recalled memories:
// both servers read the same prompt) and "as shipped".
import { rmSync } from "node:fs";
import pg from "pg";
import { createServer } from "node:net";
import { join } from "node:path";
import { packageRoot } from "../src/paths.js";
import { ensureLlamaServer, startServer, type BenchGpu, type RunningServer } from "./llama-server.js";
import {
  agentSession,
  burst,
  concurrent,
  LOOP_STEPS,
  oneStream,
  pairedStreams,
  quartiles,
  type ConcurrentResult,
  type SessionResult,
} from "./serving.js";

export interface VsLlamaServerOptions {
  benchModel: string;
  tinyModel: string;
  dataDir: string;
  threads: number;
  /** Slots on both servers. */
  parallel: number;
  /** Both servers on this GPU (llama-server built for it, every layer offloaded); unset: the CPU. */
  gpu?: BenchGpu | false;
  /** The GPU's name, for the table. */
  device?: string | undefined;
  /** How many chats at once the concurrency rows send; 1, 2, 4 and 8 unless given. */
  concurrency?: number[];
  /** Bursts of each count on each server, in turn (CONCURRENT_ROUNDS unless given): the rows give their medians. */
  concurrentRounds?: number;
  runs: number;
  maxTokens: number;
  /** Words of the agent session's system prompt (about 1.3 tokens each on the bench model). */
  sessionWords: number;
  burstChats: number;
  /**
   * A PostgreSQL server (with pgvector) whose user may create databases: the burst is measured
   * on it too, in a database made for the run and dropped after. Unset: the embedded database only.
   */
  postgresUrl?: string | undefined;
  /** Only the bursts (BENCH_ONLY=burst), keeping the other measures' last results. */
  burstOnly?: boolean;
  /** The one-stream warm-up, each server; WARMUP unless given. */
  warmup?: { runs: number; maxTokens: number };
  /** Whether the short-chat bursts are measured too (default true). */
  bursts?: boolean;
  /**
   * Agent sessions on each server, each its own system prompt, in turn (which goes first
   * alternating); the table gives the median session by its warm turn's share of its cold one.
   * 1 unless given: a session of the bench model reads its cold prompt for minutes on a CPU.
   */
  sessions?: number;
  /** Whether agent sessions are measured on the bare servers too (the same prompt to both), beside the shipped one. */
  bareSessions?: boolean;
  /** The model's name for the table, where it is not the bench model. */
  modelName?: string;
  /** The targets the table checks; TARGETS unless given. */
  targets?: Targets;
  say: (line: string) => void;
}

type Burst = { n: number; wallMs: number; medianMs: number };

/** The one-stream warm-up: 2,048 tokens from each server, a few seconds on a GPU, about a minute on two cores. */
const WARMUP = { runs: 8, maxTokens: 256 };

/** What the table checks: one stream's decode and chats at once against llama-server's, the last first token's ratio, at these counts. */
export interface Targets {
  oneStream: number;
  atOnce: number;
  lastFirstToken: number;
  atOnceCounts: number[];
}
const TARGETS: Targets = { oneStream: 0.95, atOnce: 0.9, lastFirstToken: 1.5, atOnceCounts: [4] };

type Quartiles = { q1: number; median: number; q3: number };

type Side<T> = { llama: T; psyche: T };

export type VsLlamaServerResult =
  | { skipped: string }
  | {
      date: string;
      /** The machine it was measured on (bench/run.ts adds it), where known. */
      machine?: string;
      commit: string;
      builtSeconds: number | null;
      /** llama-server was the one PSYCHE_BENCH_LLAMA_SERVER named, built elsewhere. */
      given?: true;
      threads: number;
      parallel: number;
      /** The GPU both servers ran on (BENCH_GPU); absent: the CPU. */
      gpu?: string;
      /**
       * Medians of each server's runs; `paired` (absent from older results): the requests taken
       * in turn, Psyche against llama-server pair by pair (bench/serving.ts, pairedStreams).
       */
      oneStream: Side<{ ttftMs: number; decodeTps: number }> & {
        runs?: number;
        maxTokens?: number;
        paired?: { ttftDiffMs: Quartiles; decodeRatio: Quartiles };
        /** The warm-up before the measured pairs, measured the same way (absent from older results). */
        fresh?: Side<{ ttftMs: number; decodeTps: number }> & { runs: number; maxTokens: number; decodeRatio: Quartiles };
      };
      /**
       * Medians of each server's rounds; `paired` (absent from older results): round by round,
       * Psyche's aggregate and last first token against llama-server's in the same round.
       */
      concurrent: (Side<ConcurrentResult> & { paired?: { aggregateRatio: Quartiles; lastRatio: Quartiles } })[];
      /** Rounds of each count of chats at once on each server, the rows their medians (absent from older results: one). */
      concurrentRounds?: number;
      session: Side<SessionResult>;
      /** Sessions each server had, the median one given (absent from older results: one). */
      sessions?: number;
      /** The same on the bare servers, where measured. */
      bareSession?: Side<SessionResult>;
      /** Absent where the run measured no bursts (the tiny model's own comparison). */
      burst?: Side<Burst>;
      /** The model, where not the bench model; the targets, where not TARGETS. */
      modelName?: string;
      targets?: Targets;
      /** The same burst with Psyche on real PostgreSQL, where one was given. */
      burstPostgres?: Side<Burst> | undefined;
    };

/** What BENCH_ONLY=burst measures: merged into the last full run's results. */
export type BurstResult = { skipped: string } | { date: string; burst: Side<Burst>; burstPostgres?: Side<Burst> | undefined };

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

async function llamaServer(o: VsLlamaServerOptions, path: string, model: string, contextPerSlot: number): Promise<RunningServer> {
  const port = await freePort();
  // llama-server's -c is the whole cache, shared by its slots: each gets what a Psyche slot has.
  const args = ["-m", model, "-t", String(o.threads), "-c", String(contextPerSlot * o.parallel), "-np", String(o.parallel)];
  // On a GPU, every layer there, as node-llama-cpp places a model that fits.
  if (o.gpu) args.push("-ngl", "999");
  return startServer(
    path,
    [...args, "--host", "127.0.0.1", "--port", String(port)],
    /listening on (http:\/\/\S+)/,
    () => `http://127.0.0.1:${port}`,
  );
}

async function psyche(
  o: VsLlamaServerOptions,
  model: string,
  name: string,
  contextSize: number,
  bare: boolean,
  databaseUrl?: string,
): Promise<RunningServer> {
  // The installed command, as a user starts it (bin/psyche.cjs sizes the thread pool).
  const cli = join(packageRoot(), "bin", "psyche.cjs");
  // A fresh database each run: nothing remembered from the last one.
  rmSync(join(o.dataDir, name), { recursive: true, force: true });
  // The device llama-server was built for (bench/llama-server.ts): the CPU unless BENCH_GPU names one.
  const args = [
    cli,
    "serve",
    "--model",
    model,
    "--gpu",
    o.gpu || "false",
    "--threads",
    String(o.threads),
    "--parallel",
    String(o.parallel),
  ];
  args.push("--context-size", String(contextSize), "--port", "0", "--db-port", "0", "--data-dir", join(o.dataDir, name));
  // Nothing else competes for the cores while either server is measured: no self-started
  // dreams, idle thoughts or reflections (--dream-delay-seconds 0), no consolidation.
  args.push("--embedding-model", "builtin", "--dream-delay-seconds", "0", "--consolidation", "false", "--log-level", "warn");
  if (bare) args.push("--persona", "", "--recall-prompt-tokens", "0");
  // The embedded database unless one is given, whatever the bench's own environment says.
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  const env: NodeJS.ProcessEnv = databaseUrl ? { ...rest, DATABASE_URL: databaseUrl } : rest;
  return startServer(process.execPath, args, /Psyche is listening on (http:\/\/\S+)/, (m) => m[1]!, env);
}

/** A fresh database on the given server for one run; dropped by the returned function. */
async function freshDatabase(serverUrl: string, name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`drop database if exists ${name} with (force)`);
  await admin(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/**
 * Short chats at once on the tiny model, Psyche as shipped: on the embedded database, and on
 * real PostgreSQL where one is given (each beside a llama-server run measured just before it).
 */
async function bursts(
  o: VsLlamaServerOptions,
  llamaServerPath: string,
  start: (s: Promise<RunningServer>) => Promise<RunningServer>,
): Promise<{ burst: Side<Burst>; burstPostgres: Side<Burst> | undefined }> {
  // Five bursts, the middle one by wall time: a server's first burst also pays for growing its
  // connection pool and warming its code, which a server under steady load has done, and
  // llama-server's burst (about 0.2 s) moved by a quarter from one burst to the next.
  const shortChats = async (url: string) => {
    const runs: Burst[] = [];
    for (let i = 0; i < 5; i++) runs.push(await burst(url, o.burstChats, 16));
    return runs.sort((a, b) => a.wallMs - b.wallMs)[2]!;
  };
  o.say(`vs llama-server: ${o.burstChats} short chats at once, the tiny model, Psyche as shipped`);
  const tiny = {
    llama: await start(llamaServer(o, llamaServerPath, o.tinyModel, 4096)),
    psyche: await start(psyche(o, o.tinyModel, "vs-burst", 4096, false)),
  };
  await both(tiny, (url) => oneStream(url, 1, 4));
  const embedded = await both(tiny, shortChats);
  await tiny.psyche.stop();
  let burstPostgres: Side<Burst> | undefined;
  if (o.postgresUrl) {
    o.say(`vs llama-server: the same burst, Psyche on PostgreSQL`);
    const db = await freshDatabase(o.postgresUrl, "psyche_bench_burst");
    try {
      const onPostgres = { llama: tiny.llama, psyche: await start(psyche(o, o.tinyModel, "vs-burst-pg", 4096, false, db.url)) };
      await oneStream(onPostgres.psyche.url, 1, 4);
      burstPostgres = await both(onPostgres, shortChats);
      await onPostgres.psyche.stop();
    } finally {
      await db.drop();
    }
  }
  await tiny.llama.stop();
  return { burst: embedded, burstPostgres };
}

/** BENCH_ONLY=burst: the bursts alone. */
export async function benchBursts(o: VsLlamaServerOptions): Promise<BurstResult> {
  const build = ensureLlamaServer(o.say, o.gpu ?? false);
  if ("skipped" in build) {
    o.say(`llama-server comparison skipped: ${build.skipped}`);
    return build;
  }
  const started: RunningServer[] = [];
  try {
    return { date: new Date().toISOString(), ...(await bursts(o, build.path, async (s) => started[started.push(await s) - 1]!)) };
  } finally {
    for (const s of started) await s.stop();
  }
}

/**
 * One burst of chats at once is one sample of a noisy machine: llama-server's own last first
 * token of four read 14 ms in one run and 32 in the next (2026-12-05). So each count is sent in
 * rounds, the servers in turn (which goes first alternating), new chats each round, and the rows
 * give the rounds' medians; Psyche's against llama-server's as the median of the rounds' ratios,
 * each round's two bursts sent one after the other, as one stream's pairs are (bench/serving.ts,
 * pairedStreams): the ratio of two medians taken minutes apart moved with the machine's speed
 * (llama-server's last first token of four read 15, 24 and 27 ms in three runs of 2026-12-07).
 */
const CONCURRENT_ROUNDS = 5;

async function concurrentRounds(
  servers: Side<RunningServer>,
  k: number,
  maxTokens: number,
  rounds: number,
): Promise<Side<ConcurrentResult> & { paired: { aggregateRatio: Quartiles; lastRatio: Quartiles } }> {
  const runs: Side<ConcurrentResult[]> = { llama: [], psyche: [] };
  for (let r = 0; r < rounds; r++) {
    const order: (keyof Side<unknown>)[] = r % 2 === 0 ? ["llama", "psyche"] : ["psyche", "llama"];
    for (const side of order) runs[side].push(await concurrent(servers[side].url, k, maxTokens, 100 * k + 1000 * r));
  }
  const mid = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const medians = (rs: ConcurrentResult[]): ConcurrentResult => ({
    k,
    aggregateTps: mid(rs.map((r) => r.aggregateTps)),
    ttftMedianMs: mid(rs.map((r) => r.ttftMedianMs)),
    ttftLastMs: mid(rs.map((r) => r.ttftLastMs)),
    wallMs: mid(rs.map((r) => r.wallMs)),
  });
  const ratios = (of: (r: ConcurrentResult) => number) => quartiles(runs.psyche.map((p, i) => of(p) / of(runs.llama[i]!)));
  return {
    llama: medians(runs.llama),
    psyche: medians(runs.psyche),
    paired: { aggregateRatio: ratios((r) => r.aggregateTps), lastRatio: ratios((r) => r.ttftLastMs) },
  };
}

/**
 * `n` agent sessions on each server, in turn (which goes first alternating), each opening its
 * system prompt with its own line so that none finds another's prompt held; the median session
 * by its warm turn's share of its cold one. A session's warm turn is one request, and one
 * request on this shared machine moved by half from run to run (2026-12-06).
 */
async function sessionRounds(servers: Side<RunningServer>, o: VsLlamaServerOptions, n: number): Promise<Side<SessionResult>> {
  const runs: Side<SessionResult[]> = { llama: [], psyche: [] };
  for (let r = 0; r < n; r++) {
    const order: (keyof Side<unknown>)[] = r % 2 === 0 ? ["llama", "psyche"] : ["psyche", "llama"];
    const opening = n > 1 ? `Session ${r + 1}. ` : "";
    const conversation = `bench-session-${r + 1}-${Date.now()}`;
    for (const side of order)
      runs[side].push(await agentSession(servers[side].url, o.sessionWords + 17, o.parallel, opening, conversation));
  }
  const median = (rs: SessionResult[]) => [...rs].sort((a, b) => a.warmShareOfCold - b.warmShareOfCold)[Math.floor(rs.length / 2)]!;
  return { llama: median(runs.llama), psyche: median(runs.psyche) };
}

async function both<T>(servers: Side<RunningServer>, measure: (url: string) => Promise<T>): Promise<Side<T>> {
  const llama = await measure(servers.llama.url);
  const psyche = await measure(servers.psyche.url);
  return { llama, psyche };
}

export async function benchVsLlamaServer(o: VsLlamaServerOptions): Promise<VsLlamaServerResult> {
  const build = ensureLlamaServer(o.say, o.gpu ?? false);
  if ("skipped" in build) {
    o.say(`llama-server comparison skipped: ${build.skipped}`);
    return build;
  }
  if (build.builtSeconds !== null) o.say(`  built in ${(build.builtSeconds / 60).toFixed(1)} min`);
  const sessionContext = 32_768;
  const started: RunningServer[] = [];
  const start = async (s: Promise<RunningServer>) => {
    const r = await s;
    started.push(r);
    return r;
  };
  try {
    const model = o.modelName ?? "the bench model";
    o.say(`vs llama-server: ${model}, bare`);
    const bare = {
      llama: await start(llamaServer(o, build.path, o.benchModel, sessionContext)),
      psyche: await start(psyche(o, o.benchModel, "vs-bare", sessionContext, true)),
    };
    // Both warmed the same way, and the warm-up reported on its own: a fresh Psyche runs below
    // its steady speed for its first ~2,000 tokens while V8 compiles node-llama-cpp's decode
    // loop (docs/benchmarks.md), which on a GPU's short steps would fill the measured runs.
    const warmup = o.warmup ?? WARMUP;
    const fresh = await pairedStreams(bare.llama.url, bare.psyche.url, warmup.runs, warmup.maxTokens);
    const pairs = await pairedStreams(bare.llama.url, bare.psyche.url, o.runs, o.maxTokens);
    const one = {
      llama: pairs.a,
      psyche: pairs.b,
      runs: o.runs,
      maxTokens: o.maxTokens,
      paired: { ttftDiffMs: pairs.ttftDiffMs, decodeRatio: pairs.decodeRatio },
      fresh: { llama: fresh.a, psyche: fresh.b, ...warmup, decodeRatio: fresh.decodeRatio },
    };
    const conc: Side<ConcurrentResult>[] = [];
    const rounds = o.concurrentRounds ?? CONCURRENT_ROUNDS;
    for (const k of o.concurrency ?? [1, 2, 4, 8]) conc.push(await concurrentRounds(bare, k, o.maxTokens, rounds));
    const sessions = o.sessions ?? 1;
    const bareSession = o.bareSessions ? await sessionRounds(bare, o, sessions) : undefined;
    for (const s of [bare.llama, bare.psyche]) await s.stop();

    o.say(`vs llama-server: ${model}, Psyche as shipped`);
    const shipped = {
      llama: await start(llamaServer(o, build.path, o.benchModel, sessionContext)),
      psyche: await start(psyche(o, o.benchModel, "vs-shipped", sessionContext, false)),
    };
    await both(shipped, (url) => oneStream(url, 1, 4));
    const session = await sessionRounds(shipped, o, sessions);
    for (const s of [shipped.llama, shipped.psyche]) await s.stop();

    const { burst: burstResult, burstPostgres } = o.bursts === false ? {} : await bursts(o, build.path, start);
    return {
      date: new Date().toISOString(),
      commit: build.commit,
      builtSeconds: build.builtSeconds,
      ...(build.given ? { given: build.given } : {}),
      threads: o.threads,
      parallel: o.parallel,
      ...(o.gpu ? { gpu: o.device ?? o.gpu } : {}),
      oneStream: one,
      concurrent: conc,
      concurrentRounds: rounds,
      session,
      sessions,
      ...(bareSession ? { bareSession } : {}),
      ...(burstResult ? { burst: burstResult, burstPostgres } : {}),
      ...(o.modelName ? { modelName: o.modelName } : {}),
      ...(o.targets ? { targets: o.targets } : {}),
    };
  } finally {
    for (const s of started) await s.stop();
  }
}

/** The table of docs/benchmarks.md: Psyche's figures beside llama-server's, and as a ratio. */
export function vsLlamaServerTable(r: VsLlamaServerResult): string[] {
  if ("skipped" in r) return ["", `Psyche against llama-server: not measured (${r.skipped}).`];
  const f0 = (x: number) => x.toFixed(0);
  const f1 = (x: number) => x.toFixed(1);
  const pct = (x: number) => `${(x * 100).toFixed(0)}%`;
  const pass = (ok: boolean) => (ok ? "yes" : "**no**");
  const one = r.oneStream;
  const signed = (x: number) => `${x >= 0 ? "+" : ""}${f0(x)}`;
  // Pair by pair where measured so (the ratio's and difference's medians), else the medians' ratio and difference.
  const decodeRatio = one.paired?.decodeRatio.median ?? one.psyche.decodeTps / one.llama.decodeTps;
  const ttftDiff = one.paired?.ttftDiffMs.median ?? one.psyche.ttftMs - one.llama.ttftMs;
  const targets = r.targets ?? TARGETS;
  const rows: string[] = [
    `| one stream: decode tokens/s | ${f1(one.llama.decodeTps)} | ${f1(one.psyche.decodeTps)} | ${pct(decodeRatio)}${one.paired ? ` (pairs' IQR ${pct(one.paired.decodeRatio.q1)} to ${pct(one.paired.decodeRatio.q3)})` : ""} | >= ${pct(targets.oneStream)} | ${pass(decodeRatio >= targets.oneStream)} |`,
    `| one stream: time to first token (ms) | ${f0(one.llama.ttftMs)} | ${f0(one.psyche.ttftMs)} | ${signed(ttftDiff)} ms${one.paired ? ` (pairs' IQR ${signed(one.paired.ttftDiffMs.q1)} to ${signed(one.paired.ttftDiffMs.q3)})` : ""} | <= +15 ms | ${pass(ttftDiff <= 15)} |`,
  ];
  if (one.fresh)
    rows.push(
      `| one stream, a fresh server: decode over its first ${one.fresh.runs * one.fresh.maxTokens} tokens (the warm-up) | ${f1(one.fresh.llama.decodeTps)} | ${f1(one.fresh.psyche.decodeTps)} | ${pct(one.fresh.decodeRatio.median)} (pairs' IQR ${pct(one.fresh.decodeRatio.q1)} to ${pct(one.fresh.decodeRatio.q3)}) |  | - |`,
    );
  for (const c of r.concurrent) {
    const checked = targets.atOnceCounts.includes(c.llama.k);
    // Round by round where measured so (the ratios' medians), else the medians' ratios; both shown.
    const medians = { aggregate: c.psyche.aggregateTps / c.llama.aggregateTps, last: c.psyche.ttftLastMs / c.llama.ttftLastMs };
    const aggregate = c.paired?.aggregateRatio.median ?? medians.aggregate;
    const last = c.paired?.lastRatio.median ?? medians.last;
    const x = (v: number) => `${v.toFixed(2)}x`;
    rows.push(
      `| ${c.llama.k} at once: aggregate tokens/s | ${f1(c.llama.aggregateTps)} | ${f1(c.psyche.aggregateTps)} | ${pct(aggregate)}${c.paired ? ` (rounds' IQR ${pct(c.paired.aggregateRatio.q1)} to ${pct(c.paired.aggregateRatio.q3)}; medians' ${pct(medians.aggregate)})` : ""} | ${checked ? `>= ${pct(targets.atOnce)}` : ""} | ${checked ? pass(aggregate >= targets.atOnce) : "-"} |`,
      `| ${c.llama.k} at once: first token, median / last (ms) | ${f0(c.llama.ttftMedianMs)} / ${f0(c.llama.ttftLastMs)} | ${f0(c.psyche.ttftMedianMs)} / ${f0(c.psyche.ttftLastMs)} | ${x(last)} (last${c.paired ? `; rounds' IQR ${x(c.paired.lastRatio.q1)} to ${x(c.paired.lastRatio.q3)}; medians' ${x(medians.last)}` : ""}) | ${checked ? `<= ${targets.lastFirstToken}x` : ""} | ${checked ? pass(last <= targets.lastFirstToken) : "-"} |`,
    );
  }
  const s = r.session;
  const of = r.sessions && r.sessions > 1 ? `, the median of ${r.sessions}` : "";
  const b = r.bareSession;
  if (b)
    rows.push(
      `| agent session (${b.psyche.promptTokens} prompt tokens), bare${of}: first token cold / warm (ms) | ${f0(b.llama.coldTtftMs)} / ${f0(b.llama.warmTtftMs)} | ${f0(b.psyche.coldTtftMs)} / ${f0(b.psyche.warmTtftMs)} | warm ${(b.psyche.warmTtftMs / b.llama.warmTtftMs).toFixed(2)}x llama-server's; ${pct(b.psyche.warmShareOfCold)} of cold |  | - |`,
    );
  rows.push(
    `| agent session (${s.psyche.promptTokens} prompt tokens), Psyche as shipped${of}: first token cold / warm (ms) | ${f0(s.llama.coldTtftMs)} / ${f0(s.llama.warmTtftMs)} | ${f0(s.psyche.coldTtftMs)} / ${f0(s.psyche.warmTtftMs)} | warm = ${pct(s.psyche.warmShareOfCold)} of cold | <= 10% | ${pass(s.psyche.warmShareOfCold <= 0.1)} |`,
  );
  // Older results have no such request.
  if (s.psyche.afterTakenTtftMs !== undefined && s.llama.afterTakenTtftMs !== undefined)
    rows.push(
      `| the session's next request, after ${r.parallel} chats at once took every slot: first token (ms) | ${f0(s.llama.afterTakenTtftMs)} | ${f0(s.psyche.afterTakenTtftMs)} | ${pct(s.psyche.afterTakenShareOfCold)} of cold | | - |`,
    );
  // Older results have no loop.
  for (const [run, how] of [
    [b, "bare"],
    [s, "Psyche as shipped"],
  ] as const)
    if (run?.psyche.afterLoopTtftMs !== undefined && run.llama.afterLoopTtftMs !== undefined)
      rows.push(
        `| the human's next message after ${LOOP_STEPS} tool results (${run.psyche.afterLoopPromptTokens} prompt tokens), ${how}: first token (ms) | ${f0(run.llama.afterLoopTtftMs)} | ${f0(run.psyche.afterLoopTtftMs)} | ${(run.psyche.afterLoopTtftMs / run.llama.afterLoopTtftMs).toFixed(2)}x llama-server's; ${pct(run.psyche.afterLoopShareOfCold!)} of cold | | - |`,
      );
  const burst = r.burst;
  if (burst)
    rows.push(
      `| ${burst.llama.n} short chats at once, tiny model: wall / median request (ms) | ${f0(burst.llama.wallMs)} / ${f0(burst.llama.medianMs)} | ${f0(burst.psyche.wallMs)} / ${f0(burst.psyche.medianMs)} | ${(burst.psyche.wallMs / burst.llama.wallMs).toFixed(1)}x | <= 8x (embedded database) | ${pass(burst.psyche.wallMs <= 8 * burst.llama.wallMs)} |`,
    );
  const pgBurst = r.burstPostgres;
  if (pgBurst)
    rows.push(
      `| ${pgBurst.llama.n} short chats at once, tiny model, Psyche on PostgreSQL: wall / median request (ms) | ${f0(pgBurst.llama.wallMs)} / ${f0(pgBurst.llama.medianMs)} | ${f0(pgBurst.psyche.wallMs)} / ${f0(pgBurst.psyche.medianMs)} | ${(pgBurst.psyche.wallMs / pgBurst.llama.wallMs).toFixed(1)}x | <= 4x (real PostgreSQL) | ${pass(pgBurst.psyche.wallMs <= 4 * pgBurst.llama.wallMs)} |`,
    );
  else if (burst)
    rows.push(
      "| short chats at once, Psyche on PostgreSQL | - | - | - | <= 4x (real PostgreSQL) | not measured (set PSYCHE_BENCH_POSTGRES) |",
    );
  return [
    "",
    `Psyche against llama-server, measured ${r.date.slice(0, 10)}${r.machine ? ` on ${r.machine}` : ""}${r.gpu ? `, both on the GPU (${r.gpu})` : ""}: llama-server built from node-llama-cpp's bundled llama.cpp (${r.commit}${r.builtSeconds !== null ? `, built in ${(r.builtSeconds / 60).toFixed(1)} min` : ""}${r.given ? ", the build PSYCHE_BENCH_LLAMA_SERVER named" : ""}), both with ${r.threads} threads and ${r.parallel} slots of the same context, ${r.modelName ?? "the bench model unless named"}, each server its own process, measured alternately. Psyche bare: no persona, no recalled memories, so both read the same prompt.${one.paired ? ` One stream: ${one.runs} pairs of requests for ${one.maxTokens} tokens, the same request to each server in turn (which goes first alternating); the medians of each server's runs, and Psyche's against llama-server's as the median of the pairs' ratios (decode) and differences (first token).` : ""}${one.fresh ? ` Before them, ${one.fresh.runs} such pairs of ${one.fresh.maxTokens}-token requests warmed both servers, measured as the fresh server's row.` : ""}${r.concurrentRounds ? ` Chats at once: each count sent in ${r.concurrentRounds} rounds on each server in turn (which goes first alternating), new chats each round; the rows give the rounds' medians${r.concurrent.some((c) => c.paired) ? ", and Psyche's against llama-server's as the median of the rounds' ratios (the medians' ratio beside it)" : ""}.` : ""}`,
    "",
    "| measure | llama-server | Psyche | Psyche vs llama-server | target | met |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ];
}

// npm run bench: writes bench/results/latest.json and .md, and the table in docs/benchmarks.md.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { loadConfig } from "../src/config.js";
import { createLlamaEngine } from "../src/inference/create-engine.js";
import { BENCH_SHAPE, TINY_SHAPE, writeRandomModel } from "../src/inference/random-model.js";
import { ensureTinyModel } from "../src/inference/load-model.js";
import { createLogger } from "../src/log.js";
import { packageRoot } from "../src/paths.js";
import { benchStreamVsRaw, type StreamBenchResult } from "./stream-vs-raw.js";
import { benchSearch, benchStore, type SearchResult, type StoreResult } from "./memory.js";
import { benchWake } from "./wake.js";
import { benchStepCosts, type StepCosts } from "./step-costs.js";
import { benchTurnPath, STAGES, type TurnPathResult } from "./turn-path.js";
import { type BudgetResult, benchBudget } from "./budget.js";
import { CPU_PARALLEL, MAX_PARALLEL } from "../src/inference/choose-parallel.js";
import { benchMcp, type McpBenchResult } from "./mcp.js";
import { benchHooks, type HooksBenchResult } from "./hooks.js";
import { realmemDir } from "./realmem.js";
import { benchRetrieval, type Recall, type RetrievalResult } from "./retrieval.js";
import { benchVectorSides, type VectorSidesResult } from "./vector-sides.js";
import {
  benchBursts,
  benchVsLlamaServer,
  vsLlamaServerTable,
  type VsLlamaServerOptions,
  type VsLlamaServerResult,
} from "./vs-llama-server.js";

const root = packageRoot();
const dataDir = join(root, ".psyche", "bench");
// 32k tokens of trained context: an agent session's 20k-token prompt fits (bench/serving.ts).
const modelPath = join(root, ".psyche", "models", "psyche-bench-0.5b-32k.gguf");
const runs = Number(process.env.BENCH_RUNS ?? 15);
const maxTokens = Number(process.env.BENCH_TOKENS ?? 64);
const ttftRuns = Number(process.env.BENCH_TTFT_RUNS ?? 150);

// BENCH_ONLY=stream, serving, serving-tiny (the tiny model beside llama-server), burst (serving's short-chat bursts
// alone), turns (a turn's stages before its first token), memory, wake, mcp, hooks, retrieval or steps runs
// one part, keeping the others' last results; PSYCHE_BENCH_POSTGRES=<url of a PostgreSQL with pgvector whose user may
// create databases> measures the burst on it too;
// BENCH_ONLY=table only rewrites the tables from bench/results/latest.json.
// BENCH_GPU=cuda (or vulkan) BENCH_ONLY=serving measures both servers on that GPU instead (llama-server
// built for it, into a cache of its own), kept beside the CPU's results as servingGpu.
const only = process.env.BENCH_ONLY;
const gpu = z
  .enum(["cuda", "vulkan"])
  .optional()
  .parse(process.env.BENCH_GPU || undefined);

mkdirSync(join(root, ".psyche", "models"), { recursive: true });
if (!existsSync(modelPath) && (!only || ["stream", "serving", "wake", "memory"].includes(only))) {
  const t = Date.now();
  process.stderr.write(`writing the bench model (${BENCH_SHAPE.name}) to ${modelPath}...\n`);
  writeRandomModel(modelPath, BENCH_SHAPE);
  process.stderr.write(`  done in ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
}

const previous = existsSync(join(root, "bench", "results", "latest.json"))
  ? JSON.parse(readFileSync(join(root, "bench", "results", "latest.json"), "utf8"))
  : {};
const log = createLogger("warn");
const cores = availableParallelism();
/** This machine, as the tables name it. */
const thisMachine = `${cpus()[0]?.model ?? "cpu"}, ${cores} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
/** A CPU comparison with llama-server, named with the machine it ran on (a GPU's names its device). */
const measuredHere = (r: VsLlamaServerResult): VsLlamaServerResult => ("skipped" in r ? r : { ...r, machine: thisMachine });
// The stream benchmark measures the path, not memory: no recall in the prompt.
const streamFlags = {
  // The CPU, as llama-server is built here (bench/llama-server.ts): the figures are this machine's cores.
  gpu: "false",
  dataDir,
  port: 0,
  dbPort: 0,
  logLevel: "warn",
  quiet: true,
  embeddingModel: "builtin",
  embeddingThreads: 1,
  recallPromptTokens: 0,
  memoryTools: false,
};

let measured = previous.measured ?? [];
const part = (
  name: "stream" | "serving" | "serving-tiny" | "turns" | "burst" | "memory" | "wake" | "mcp" | "hooks" | "retrieval" | "steps",
) => !only || only === name;
/** The GPU's name as the driver gives it, and the cores beside it. */
const gpuDevice = (backend: string) => {
  const name = spawnSync("nvidia-smi", ["--query-gpu=name", "--format=csv,noheader"], { encoding: "utf8" }).stdout?.trim();
  return name ? `${name.split("\n")[0]}, ${cores} cores` : backend;
};
// On a GPU (BENCH_GPU): the bench model, raw node-llama-cpp against Psyche through HTTP, both on it.
let measuredGpu: { device: string; date: string; rows: { model: string; threads: number; stream: StreamBenchResult }[] } | undefined =
  previous.measuredGpu;
if (part("stream") && gpu) {
  const config = loadConfig({ ...streamFlags, gpu, model: modelPath, threads: cores }, {});
  const engine = await createLlamaEngine(config, log);
  process.stderr.write(`stream vs raw on the GPU: ${runs} runs of ${maxTokens} tokens and ${ttftRuns} of 1\n`);
  const stream = await benchStreamVsRaw(config, log, engine, runs, maxTokens, ttftRuns);
  measuredGpu = { device: gpuDevice(gpu), date: new Date().toISOString(), rows: [{ model: BENCH_SHAPE.name, threads: cores, stream }] };
} else if (part("stream")) {
  measured = [];
  // On a small machine the model's threads and the server's one JS thread compete: measure
  // with every core (the default) and with one core left to the server.
  for (const threads of [...new Set([cores, Math.max(1, cores - 1)])]) {
    const config = loadConfig({ ...streamFlags, model: modelPath, threads }, {});
    const engine = await createLlamaEngine(config, log);
    process.stderr.write(`stream vs raw: ${runs} runs of ${maxTokens} tokens and ${ttftRuns} of 1, ${threads} threads\n`);
    measured.push({ model: BENCH_SHAPE.name, threads, stream: await benchStreamVsRaw(config, log, engine, runs, maxTokens, ttftRuns) });
  }
  // The bench model's own time to first token swings by tens of ms from run to run on a shared
  // machine, more than the overhead being measured. The tiny model's barely moves, so the same
  // measurement on it shows what Psyche's path adds with little noise.
  const tinyRuns = 3 * runs;
  const config = loadConfig({ ...streamFlags, model: ensureTinyModel(dataDir), threads: 1 }, {});
  const engine = await createLlamaEngine(config, log);
  process.stderr.write(`stream vs raw (tiny model): ${tinyRuns} runs of ${maxTokens} tokens and ${ttftRuns} of 1, 1 thread\n`);
  measured.push({ model: "psyche-tiny", threads: 1, stream: await benchStreamVsRaw(config, log, engine, tinyRuns, maxTokens, ttftRuns) });
}

let serving: VsLlamaServerResult | undefined = previous.serving;
const servingOptions: VsLlamaServerOptions = {
  benchModel: modelPath,
  tinyModel: ensureTinyModel(dataDir),
  dataDir: join(dataDir, "serving"),
  threads: cores,
  // The CPU default (inference/choose-parallel.ts): llama-server is given as many slots.
  parallel: loadConfig({}, {}).parallel ?? CPU_PARALLEL,
  runs: Number(process.env.BENCH_SERVING_RUNS ?? 15),
  maxTokens,
  sessionWords: Number(process.env.BENCH_SESSION_WORDS ?? 9_000),
  burstChats: Number(process.env.BENCH_BURST ?? 40),
  postgresUrl: process.env.PSYCHE_BENCH_POSTGRES || undefined,
  say: (line) => process.stderr.write(`${line}\n`),
};
// The tiny model beside llama-server on this machine (issue "Short steps at the engine's speed"):
// its steps are short, as a GPU's are, so what Psyche does around a step shows. The tiny model's
// shape with a 32k context, so an agent session of some 15k tokens fits, and it never ends a
// reply by itself.
let servingTiny: VsLlamaServerResult | undefined = previous.servingTiny;
if (part("serving-tiny") && !gpu) {
  const tinyBench = join(root, ".psyche", "models", "psyche-tiny-bench.gguf");
  if (!existsSync(tinyBench))
    writeRandomModel(tinyBench, { ...TINY_SHAPE, name: "psyche-tiny-bench", contextLength: 32768, endOfTurnBias: -30 });
  servingTiny = measuredHere(
    await benchVsLlamaServer({
      ...servingOptions,
      benchModel: tinyBench,
      modelName: "the tiny model (psyche-tiny-bench: the tiny model's shape with a 32k context)",
      dataDir: join(dataDir, "serving-tiny"),
      parallel: 16,
      concurrency: [1, 4, 16],
      // Its bursts take a second or a few: nine rounds, whose ratios the rows give (bench/vs-llama-server.ts).
      concurrentRounds: 9,
      runs: Number(process.env.BENCH_SERVING_RUNS ?? 9),
      maxTokens: 512,
      warmup: { runs: 8, maxTokens: 512 },
      // Its vocabulary is mostly single characters: some 6 tokens a word.
      sessionWords: Number(process.env.BENCH_TINY_SESSION_WORDS ?? 2_500),
      bursts: false,
      // A session's cold prompt takes about a second here: three each, and on the bare servers too.
      sessions: 3,
      bareSessions: true,
      targets: { oneStream: 0.9, atOnce: 0.8, lastFirstToken: 2, atOnceCounts: [4, 16] },
    }),
  );
}
let servingGpu: VsLlamaServerResult | undefined = previous.servingGpu;
if (part("serving") && gpu) {
  // As many slots as Psyche takes on a GPU when unset (inference/choose-parallel.ts caps it there),
  // for both servers; as many chats at once as that, among the concurrency rows.
  const parallel = Number(process.env.BENCH_PARALLEL ?? MAX_PARALLEL);
  servingGpu = await benchVsLlamaServer({
    ...servingOptions,
    gpu,
    device: gpuDevice(gpu),
    parallel,
    concurrency: [...new Set([1, 4, 16, parallel])],
    dataDir: join(dataDir, "serving-gpu"),
  });
} else if (part("serving")) serving = measuredHere(await benchVsLlamaServer(servingOptions));
else if (only === "burst" && serving && !("skipped" in serving)) {
  const b = await benchBursts(servingOptions);
  if (!("skipped" in b)) serving = { ...serving, burst: b.burst, burstPostgres: b.burstPostgres };
}

// Where a decode step's time goes (bench/step-costs.ts): the tiny model, the engine alone, one
// stream and several at once after 4,096 tokens of warm-up, with one thread and with every core.
let steps: { date: string; machine?: string; threadpool?: number; rows: (StepCosts & { threads: number })[] } | undefined = previous.steps;
if (part("steps")) {
  const rows: (StepCosts & { threads: number })[] = [];
  for (const threads of [...new Set([1, cores])]) {
    const config = loadConfig({ ...streamFlags, model: ensureTinyModel(dataDir), threads, parallel: 16, sampleInOneCall: true }, {});
    process.stderr.write(`steps: the tiny model, ${threads} thread(s), 1, 4 and 16 streams of 512 tokens\n`);
    const engine = await createLlamaEngine(config, log);
    for (const row of await benchStepCosts(engine, { streams: [1, 4, 16], maxTokens: 512, warmupTokens: 4096, rounds: 4 }))
      rows.push({ ...row, threads });
    await engine.dispose();
  }
  // libuv's pool, which every native call hops to: the server runs one thread (bin/psyche.cjs);
  // UV_THREADPOOL_SIZE=1 npm run bench measures as it runs.
  steps = { date: new Date().toISOString(), machine: thisMachine, threadpool: Number(process.env.UV_THREADPOOL_SIZE ?? 4), rows };
}

// A turn's stages before its first token (bench/turn-path.ts): the tiny model, alone and 4 at once.
let turns: TurnPathResult | undefined = previous.turns;
if (part("turns"))
  turns = await benchTurnPath({
    model: ensureTinyModel(dataDir),
    dataDir,
    threads: cores,
    runs: 30,
    rounds: 10,
    atOnce: 4,
    say: (line) => process.stderr.write(`${line}\n`),
  });

let wake = previous.wake;
if (part("wake")) {
  // Dreams on the bench model; the dream scheduler off, so only the benchmark's dreams run.
  const trials = Number(process.env.BENCH_WAKE_TRIALS ?? 20);
  const config = loadConfig({ ...streamFlags, dataDir: join(dataDir, "wake"), model: modelPath, threads: cores, dreamDelaySeconds: 0 }, {});
  process.stderr.write(`wake: ${trials} trials, one chat at a time, then as many at once as there are slots\n`);
  // serve() disposes of the engine it is given when it stops: one engine per run.
  const one = await benchWake(config, log, await createLlamaEngine(config, log), trials);
  // A burst as many as the chat slots: the dream must wake as fast when they all come at once.
  const engine = await createLlamaEngine(config, log);
  const burst = await benchWake({ ...config, dataDir: join(dataDir, "wake-burst") }, log, engine, trials, engine.slots ?? 1);
  // The reverie budget: a user chatting every few seconds, the scheduler on with its defaults.
  const budgetSeconds = Number(process.env.BENCH_BUDGET_SECONDS ?? 150);
  const budgetConfig = loadConfig(
    { ...streamFlags, dataDir: join(dataDir, "budget"), model: modelPath, threads: cores, dreamDelaySeconds: 600, dreamCooldownSeconds: 0 },
    {},
  );
  process.stderr.write(`wake: the reverie budget, ${budgetSeconds} s of chats every 3-9 s\n`);
  const budget = await benchBudget(budgetConfig, log, await createLlamaEngine(budgetConfig, log), budgetSeconds);
  wake = { date: new Date().toISOString(), model: BENCH_SHAPE.name, threads: cores, ...one, burst, budget };
}

let memory = previous.memory;
if (part("memory")) {
  const sizes = (process.env.BENCH_MEMORY_SIZES ?? "10000,100000").split(",").map(Number);
  const queries = Number(process.env.BENCH_SEARCH_QUERIES ?? 200);
  const base = loadConfig({ ...streamFlags, model: "tiny", threads: 1, embeddingThreads: cores }, {});
  process.stderr.write(`memory search: ${sizes.join(", ")} memories, ${queries} queries each\n`);
  const search = await benchSearch(base, log, sizes, queries);
  const storeThreads = [...new Set([1, cores])];
  process.stderr.write("memory store\n");
  const store = [
    ...(await benchStore(base, log, { kind: "lexical" }, storeThreads, Number(process.env.BENCH_STORE_LEXICAL ?? 400))),
    ...(await benchStore(
      base,
      log,
      { kind: "gguf", path: modelPath, name: BENCH_SHAPE.name },
      storeThreads,
      Number(process.env.BENCH_STORE_GGUF ?? 48),
    )),
  ];
  memory = { date: new Date().toISOString(), search, store };
}

let mcp: (McpBenchResult & { date: string }) | undefined = previous.mcp;
if (part("mcp")) {
  const memories = Number(process.env.BENCH_MCP_MEMORIES ?? 10_000);
  const calls = Number(process.env.BENCH_MCP_CALLS ?? 200);
  const base = loadConfig({ ...streamFlags, model: "tiny", threads: 1, embeddingThreads: cores }, {});
  process.stderr.write(`mcp: assemble_context over HTTP, ${memories} memories, ${calls} calls\n`);
  mcp = { date: new Date().toISOString(), ...(await benchMcp(base, log, memories, calls)) };
}

let hooks: (HooksBenchResult & { date: string }) | undefined = previous.hooks;
if (part("hooks")) {
  const memories = Number(process.env.BENCH_HOOKS_MEMORIES ?? 10_000);
  const base = loadConfig({ ...streamFlags, model: "tiny", threads: 1, embeddingThreads: cores }, {});
  process.stderr.write(`hooks: each hook as a process and over HTTP, ${memories} memories\n`);
  hooks = {
    date: new Date().toISOString(),
    ...(await benchHooks(base, log, memories, Number(process.env.BENCH_HOOKS_RUNS ?? 40), Number(process.env.BENCH_HOOKS_CALLS ?? 200))),
  };
}

let retrieval: RetrievalResult | undefined = previous.retrieval;
let vectorSides: VectorSidesResult | undefined = previous.vectorSides;
if (part("retrieval")) {
  const dir = realmemDir(root);
  if (!dir)
    process.stderr.write(
      "retrieval: no RealMem dataset (set REALMEM_DIR, or keep ../shared/datasets/realmem beside the project); skipped\n",
    );
  else {
    const base = loadConfig({ ...streamFlags, model: "tiny", threads: 1, embeddingThreads: cores }, {});
    const personas = Number(process.env.BENCH_RETRIEVAL_PERSONAS ?? Infinity);
    process.stderr.write(`retrieval: RealMem, ${Number.isFinite(personas) ? personas : "all"} personas\n`);
    retrieval = await benchRetrieval(base, log, dir, join(root, "bench", "results"), personas);
    process.stderr.write("retrieval: the vector sides compared, in memory\n");
    vectorSides = benchVectorSides(dir, personas);
  }
}

const keepStream = !part("stream") || gpu !== undefined;
// The stream table's machine: the one it was measured on, where it is kept from an earlier run.
const machine = keepStream && previous.machine ? String(previous.machine) : thisMachine;
const streamDate = keepStream ? (previous.date ?? new Date().toISOString()) : new Date().toISOString();
const meta =
  keepStream && previous.runs
    ? { runs: previous.runs, maxTokens: previous.maxTokens, ttftRuns: previous.ttftRuns }
    : { runs, maxTokens, ttftRuns };
const results = {
  date: streamDate,
  machine,
  ...meta,
  measured,
  measuredGpu,
  serving,
  servingTiny,
  servingGpu,
  memory,
  wake,
  mcp,
  hooks,
  retrieval,
  vectorSides,
  steps,
  turns,
};
writeFileSync(join(root, "bench", "results", "latest.json"), `${JSON.stringify(results, null, 2)}\n`);

const f1 = (x: number) => x.toFixed(1);
const signed = (x: number) => `${x >= 0 ? "+" : ""}${f1(x)}`;
const pass = (ok: boolean) => (ok ? "yes" : "**no**");
const streamRows = ({ model, threads, stream }: { model: string; threads: number; stream: StreamBenchResult }) => [
  `| ${model} | ${threads} | decode tokens/s | ${f1(stream.raw.tokensPerSecond)} | ${f1(stream.http.tokensPerSecond)} | ${(stream.httpShareOfRawTokensPerSecond * 100).toFixed(1)}% of raw | >= 95% | ${pass(stream.httpShareOfRawTokensPerSecond >= 0.95)} |`,
  `| ${model} | ${threads} | time to first token (ms) | ${f1(stream.raw.ttftMs)} | ${f1(stream.http.ttftMs)} | ${signed(stream.ttftOverheadMs)} ms (IQR ${f1(stream.ttftOverheadIqrMs[0])} to ${f1(stream.ttftOverheadIqrMs[1])}) | < 15 ms | ${pass(stream.ttftOverheadMs < 15)} |`,
];
const rows = measured.flatMap(streamRows);
const memoryTable: string[] = [];
if (memory) {
  const grows = (id: string) => {
    const rs = (memory.store as StoreResult[]).filter((r) => r.embedder === id).sort((a, b) => a.threads - b.threads);
    return rs.length > 1 && rs.at(-1)!.perSecond > rs[0]!.perSecond * 1.1;
  };
  memoryTable.push(
    "",
    `Memory, measured ${String(memory.date).slice(0, 10)} on the same machine: \`Memory.search\` end to end (embed the query in a thread, BM25 full-text and pgvector HNSW kNN candidates, rank, read the kept memories and mark them accessed), k = 10, synthetic memories spread over a year, short questions and long queries (four questions in one message); \`Memory.remember\` end to end (embed, novelty, significance and affect in threads, duplicate check, insert, full-text index), 8 at a time.`,
    "",
    "| measure | memories | threads | result | target | met |",
    "| --- | --- | --- | --- | --- | --- |",
    ...(memory.search as SearchResult[]).map(
      (r) =>
        `| search p50 / p95 (ms) | ${r.memories} | ${cores} | ${f1(r.p50Ms)} / ${f1(r.p95Ms)} | p95 < 20 ms at 100k | ${r.memories >= 100_000 ? pass(r.p95Ms < 20) : "-"} |`,
    ),
    ...(memory.search as SearchResult[]).flatMap((r) =>
      r.long
        ? [
            `| search p50 / p95, long queries (${r.long.terms} terms) (ms) | ${r.memories} | ${cores} | ${f1(r.long.p50Ms)} / ${f1(r.long.p95Ms)} | | - |`,
          ]
        : [],
    ),
    ...(memory.store as StoreResult[]).map(
      // The built-in embedder takes ~0.05 ms a text: storing with it is bound by the database,
      // so the thread target applies where embedding is the work (a GGUF model).
      (r) =>
        `| store, ${r.embedder} (memories/s) | ${r.memories} | ${r.threads} | ${f1(r.perSecond)} | ${r.embedder.startsWith("gguf-") ? "grows with threads" : "(database-bound)"} | ${r.threads > 1 && r.embedder.startsWith("gguf-") ? pass(grows(r.embedder)) : "-"} |`,
    ),
  );
}
const wakeTable: string[] = [];
if (wake) {
  const ms = (s: { p50: number; p95: number; max: number }) => `${f1(s.p50)} / ${f1(s.p95)} / ${f1(s.max)}`;
  wakeTable.push(
    "",
    `Dreams, measured ${String(wake.date).slice(0, 10)} on ${wake.model} with ${wake.threads} threads, ${wake.trials} trials: a chat arrives at a random moment 0.2–1 s into a dream. Wake latency from the request: the chat request leaving the client to the dream's journal entry paused (written just after its generation stopped). In the worker: its receipt of the chat's signal to the dream's generation stopped.${wake.burst ? ` The rows that say so: as many chats as there are slots (--parallel) arrive at once, in a run of their own; the time to first token is the slowest of theirs.` : ""}`,
    "",
    "| measure | p50 / p95 / max (ms) | target | met |",
    "| --- | --- | --- | --- |",
    ...(wake.wakeFromRequestMs
      ? [
          `| wake latency, from the request | ${ms(wake.wakeFromRequestMs)} | p95 < 100, max < 1000 | ${pass(wake.wakeFromRequestMs.p95 < 100 && wake.wakeFromRequestMs.max < 1000)} |`,
        ]
      : []),
    `| wake latency, in the worker | ${ms(wake.wakeLatencyMs)} | p95 < 100, max < 1000 | ${pass(wake.wakeLatencyMs.p95 < 100 && wake.wakeLatencyMs.max < 1000)} |`,
    `| chat time to first token, worker idle | ${ms(wake.ttftIdleMs)} | | |`,
    `| chat time to first token, dream running | ${ms(wake.ttftDreamingMs)} | p95 grows < 100 ms | ${pass(wake.ttftGrowthP95Ms < 100)} (${signed(wake.ttftGrowthP95Ms)} ms) |`,
    ...(wake.burst
      ? [
          `| ${wake.burst.arrivals} chats at once: wake latency, from the first request | ${ms(wake.burst.wakeFromRequestMs)} | p95 < 100, max < 1000 | ${pass(wake.burst.wakeFromRequestMs.p95 < 100 && wake.burst.wakeFromRequestMs.max < 1000)} |`,
          `| ${wake.burst.arrivals} chats at once: wake latency, in the worker | ${ms(wake.burst.wakeLatencyMs)} | p95 < 100, max < 1000 | ${pass(wake.burst.wakeLatencyMs.p95 < 100 && wake.burst.wakeLatencyMs.max < 1000)} |`,
          `| ${wake.burst.arrivals} chats at once: slowest first token, worker idle | ${ms(wake.burst.ttftIdleMs)} | | |`,
          `| ${wake.burst.arrivals} chats at once: slowest first token, dream running | ${ms(wake.burst.ttftDreamingMs)} | p95 grows < 100 ms | ${pass(wake.burst.ttftGrowthP95Ms < 100)} (${signed(wake.burst.ttftGrowthP95Ms)} ms) |`,
        ]
      : []),
  );
  const b = wake.budget as BudgetResult | undefined;
  if (b) {
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    wakeTable.push(
      "",
      `The reverie budget (--dream-budget ${b.share} of ${b.windowSeconds} s), measured in the same run: ${b.seconds} s of a user sending a chat every 3 to 9 s (${b.chats} chats), never quiet long enough to sleep, the scheduler on. Between chats it dreamt in ${b.stretches} stretches, of ${b.entries} dreams (${b.resumed} continued after a pause, ${b.tokens} tokens in all). Shares from the database's record of each stretch (dream_slices); a wake is a chat that arrived during a stretch, to the stretch's end.`,
      "",
      "| measure | result | target | met |",
      "| --- | --- | --- | --- |",
      `| reveries' share of the model's time, whole run | ${pct(b.shareUsed)} | > 0 (it still dreams a little) | ${pass(b.shareUsed > 0)} |`,
      `| reveries' share, worst ${b.windowSeconds} s window | ${pct(b.shareWorstWindow)} | ≤ ${pct(b.share)} (+ one stretch's stop) | ${pass(b.shareWorstWindow <= b.share + 0.02)} |`,
      `| wake latency from the request, p50 / p95 / max (ms) | ${b.wakeFromRequestMs ? ms(b.wakeFromRequestMs) : "no chat arrived during a stretch"} | p95 < 100, max < 1000 | ${b.wakeFromRequestMs ? pass(b.wakeFromRequestMs.p95 < 100 && b.wakeFromRequestMs.max < 1000) : "-"} |`,
      `| chat time to first token, nothing running (ms) | ${ms(b.ttftQuietMs)} | | |`,
      `| chat time to first token, a stretch running (ms) | ${b.ttftDreamingMs ? ms(b.ttftDreamingMs) : "-"} | | |`,
    );
  }
}
const mcpTable: string[] = [];
if (mcp) {
  mcpTable.push(
    "",
    `MCP, measured ${String(mcp.date).slice(0, 10)} on the same machine: \`assemble_context\` as a prompt hook calls it, one POST to \`/mcp\` (a new stateless MCP server per request) from a client in its own thread, ${mcp.calls} calls, ${mcp.memories} synthetic memories and 5 recent insights, max_tokens ${mcp.maxTokens}; a median answer held ${mcp.memoriesPerAnswer} memories. In process: the same assembly without HTTP or MCP.`,
    "",
    "| measure | p50 / p95 (ms) | target | met |",
    "| --- | --- | --- | --- |",
    `| assemble_context round trip over HTTP | ${f1(mcp.httpMs.p50)} / ${f1(mcp.httpMs.p95)} (max ${f1(mcp.httpMs.max)}) | p95 < 50 ms | ${pass(mcp.httpMs.p95 < 50)} |`,
    `| assemble_context in process | ${f1(mcp.inProcessMs.p50)} / ${f1(mcp.inProcessMs.p95)} | | |`,
  );
}
const hooksTable: string[] = [];
if (hooks) {
  const target: Record<string, number> = { "session-start": 100, "user-prompt-submit": 200, "pre-tool-use": 200 };
  hooksTable.push(
    "",
    `Hooks, measured ${String(hooks.date).slice(0, 10)} on the same machine: each coding-agent hook as Claude Code runs it, against a warm server holding ${hooks.memories} synthetic memories. As a process: \`psyche hook <event>\` from spawn to exit (Node's own start-up included), ${hooks.processRuns} runs each. Over HTTP: one POST to \`/hooks/<event>\`, ${hooks.httpCalls} calls each.`,
    "",
    "| hook | as a process, p50 / p95 (ms) | target | met | over HTTP, p50 / p95 (ms) | target | met |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...Object.entries(hooks.processMs).map(([event, p]) => {
      const h = hooks.httpMs[event as keyof typeof hooks.httpMs]!;
      const limit = target[event];
      return `| ${event} | ${f1(p.p50)} / ${f1(p.p95)} | ${limit ? `p95 < ${limit} ms` : ""} | ${limit ? pass(p.p95 < limit) : "-"} | ${f1(h.p50)} / ${f1(h.p95)} | p95 < 30 ms | ${pass(h.p95 < 30)} |`;
    }),
  );
}
const retrievalTable: string[] = [];
if (retrieval) {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const ratio = (p: number, b: number) => (b > 0 ? `${(p / b).toFixed(2)}x` : "-");
  const row = (name: string, n: number, p: Recall, b: Recall) =>
    `| ${name} | ${n} | ${pct(p.turn5)} / ${pct(b.turn5)} | ${pct(p.turn10)} / ${pct(b.turn10)} | ${ratio(p.turn10, b.turn10)} | ${pct(p.session5)} / ${pct(b.session5)} | ${pct(p.session10)} / ${pct(b.session10)} |`;
  retrievalTable.push(
    "",
    `Retrieval, measured ${retrieval.date.slice(0, 10)} on RealMem (${retrieval.personas} personas, ${retrieval.turnsStored} dialogue turns stored through \`Memory.remember\` in session order, each with its session as its conversation; ${retrieval.queries} queries, each answered from what came before it by \`Memory.search\` as a chat in its session asks, past that session's own turns (the chat's transcript holds them, memory/recall.ts; BM25 likewise), k = 10, the built-in embedder). Evidence recall: the share of a query's evidence turns (sessions) in the top k, averaged over queries (${retrieval.queriesWithTurnEvidence} have evidence turns found in the dialogue). BM25: k1 1.2, b 0.75, each turn on its own, the same terms, in the same run. Per-query results: \`bench/results/retrieval-queries.jsonl\`. Search p50 / p95: ${f1(retrieval.searchMs.p50)} / ${f1(retrieval.searchMs.p95)} ms.`,
    "",
    "| category | queries | turn recall@5, Psyche / BM25 | turn recall@10, Psyche / BM25 | @10 ratio (target >= 1.3x overall) | session recall@5 | session recall@10 |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    row("all", retrieval.queries, retrieval.psyche, retrieval.bm25),
    ...(retrieval.byScore
      ? [row("all, ranked by score alone (`--recall-conversation-seats 0`)", retrieval.queries, retrieval.byScore, retrieval.bm25)]
      : []),
    ...Object.entries(retrieval.byCategory).map(([c, v]) => row(c, v.psyche.queries, v.psyche, v.bm25)),
  );
  // Older results have no such measure.
  const p = retrieval.prompt;
  if (p)
    retrievalTable.push(
      "",
      `What a chat's prompt is offered in the same run (\`Memory.recall\`, the best 8, before the token budget): ${p.all.memories.toFixed(2)} memories per prompt, holding ${pct(p.all.evidenceTurns)} of the evidence turns; those that reach the floor (\`--recall-min-share ${p.floor.share}\`, \`--recall-min-coverage ${p.floor.coverage}\`): ${p.floored.memories.toFixed(2)}, holding ${pct(p.floored.evidenceTurns)}.`,
    );
}
if (vectorSides) {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const at = (side: string, weight: number, conversation: boolean) =>
    vectorSides.rows.find((r) => r.side === side && r.weight === weight && r.conversation === conversation);
  const names = [...new Set(vectorSides.rows.map((r) => r.side))];
  const weights = [...new Set(vectorSides.rows.map((r) => r.weight))].filter((w) => w > 0).sort((a, b) => a - b);
  const cell = (r: VectorSidesResult["rows"][number] | undefined) => (r ? `${pct(r.turn5)} / ${pct(r.turn10)}` : "-");
  retrievalTable.push(
    "",
    `The vector side, measured ${vectorSides.date.slice(0, 10)} (\`bench/vector-sides.ts\`): each candidate for the built-in embedder in one in-memory run over the same ${vectorSides.personas} personas and ${vectorSides.queries} queries with evidence turns, with everything else held equal (BM25 over each turn, the candidates \`Memory.search\` takes, Psyche's ranking), but without the store's conversation-neighbour indexing, so below the table above. Turn recall@5 / @10 at each vector share of relevance; "none" ranks by BM25 only (without the lift, that is the BM25 baseline above, there without the query's own session). The first columns have the conversation lift on (as Psyche runs), the last one has it off.`,
    "",
    `| vector side | ${weights.map((w) => `share ${w}${w === 1 ? " (the vector alone)" : ""}`).join(" | ")} | share ${weights[0]}, no conversation lift |`,
    `| --- | ${weights.map(() => "---").join(" | ")} | --- |`,
    ...names.map((n) =>
      n === "none"
        ? `| none (BM25 only) | ${weights.map(() => cell(at(n, 0, true))).join(" | ")} | ${cell(at(n, 0, false))} |`
        : `| ${n} | ${weights.map((w) => cell(at(n, w, true))).join(" | ")} | ${cell(at(n, weights[0]!, false))} |`,
    ),
  );
}
const stepsTable: string[] = [];
if (steps) {
  stepsTable.push(
    "",
    `Where a decode step's time goes, measured ${steps.date.slice(0, 10)}${steps.machine ? ` on ${steps.machine}` : ""} (\`BENCH_ONLY=steps\`, \`bench/step-costs.ts\`): the tiny model, Psyche's engine alone through its scheduler (no server), streams of 512 tokens after 4,096 tokens of warm-up, 4 rounds (each way in turn, where more than one is measured); medians per step in microseconds. The decode and each sample are the context's native calls as awaited (their hop to libuv's pool and back included); "between" is the main thread's JavaScript from a step's last sample to the next decode. libuv's pool: ${steps.threadpool ?? 4} thread(s)${steps.threadpool === 1 ? ", as the server runs" : ""}. Samples: a batch's sequences sampled in the decode's own native call (\`decodeBatchAndSample\`, one hop a step: the decode column holds the sampling), in one native call after it (\`sampleTokens\`), both the patched addon of an engine built by \`npm install\`, or one call each (node-llama-cpp's own); all measured on the same engine where it was built here.`,
    "",
    "| threads | streams | samples | step (µs) | decode | sampling | between | tokens/s, all streams |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...steps.rows.map(
      (r) =>
        `| ${r.threads} | ${r.streams} | ${r.sampling ?? "one each"} | ${r.periodUs} | ${r.decodeUs} | ${r.sampleUs} | ${r.betweenUs} | ${r.tokensPerSecond} |`,
    ),
  );
}
const turnsTable: string[] = turns
  ? [
      "",
      `A chat turn's stages before its first token, measured ${turns.date.slice(0, 10)} (\`BENCH_ONLY=turns\`, \`bench/turn-path.ts\`): \`psyche serve\` on the tiny model (bare, the embedded database), 8-token replies read as a client reads them, after a warm-up; each stage from one point to the next, the points being the client's send, the starts of the statements that store the turn, claim it and write its first event, and the client's first token (a turn handed to the worker beside the web role is stored claimed, so its claim is its store's: none between them, \`src/jobs/hand-off.ts\`). Medians in microseconds of ${turns.runs} chats alone and of ${turns.rounds} rounds of ${turns.atOnce} at once; the embedded database's clock counts whole milliseconds, so the three middle stages are read to the millisecond.`,
      "",
      `| stage | alone (µs) | ${turns.atOnce} at once (µs) |`,
      "| --- | --- | --- |",
      ...STAGES.map((s) => `| ${s} | ${turns.alone[s]} | ${turns.together[s]} |`),
    ]
  : [];
const table = [
  `Measured ${results.date.slice(0, 10)} on ${machine}; random-weight models, raw and HTTP alternating, the client in its own thread. Decode rates: medians of ${meta.runs} runs of ${meta.maxTokens} tokens per bench-model row (${3 * meta.runs} for the tiny model). Time to first token: ${meta.ttftRuns} pairs of one-token replies per row; the result is the median of paired differences (each HTTP run minus the raw run just before it), with their interquartile range.`,
  "",
  "| model | threads | measure | raw node-llama-cpp | through HTTP (SSE) | result | target | met |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows,
  ...(serving ? vsLlamaServerTable(serving) : []),
  ...(servingTiny ? vsLlamaServerTable(servingTiny) : []),
  ...memoryTable,
  ...wakeTable,
  ...stepsTable,
  ...turnsTable,
  ...mcpTable,
  ...hooksTable,
  ...retrievalTable,
  // Another machine's figures: after this machine's.
  ...(measuredGpu
    ? [
        "",
        `On the GPU (${measuredGpu.device}), measured ${measuredGpu.date.slice(0, 10)} as above: raw node-llama-cpp against Psyche through HTTP, both on it.`,
        "",
        "| model | threads | measure | raw node-llama-cpp | through HTTP (SSE) | result | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ...measuredGpu.rows.flatMap(streamRows),
      ]
    : []),
  ...(servingGpu ? vsLlamaServerTable(servingGpu) : []),
].join("\n");
writeFileSync(join(root, "bench", "results", "latest.md"), `${table}\n`);

const pagePath = join(root, "docs", "benchmarks.md");
const page = readFileSync(pagePath, "utf8");
const start = "<!-- bench:start -->";
const end = "<!-- bench:end -->";
if (page.includes(start) && page.includes(end)) {
  writeFileSync(pagePath, `${page.slice(0, page.indexOf(start) + start.length)}\n${table}\n${page.slice(page.indexOf(end))}`);
}
process.stdout.write(`${table}\n`);

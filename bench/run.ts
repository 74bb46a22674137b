// npm run bench: writes bench/results/latest.json and .md, and the README's table.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.js";
import { createLlamaEngine } from "../src/inference/create-engine.js";
import { BENCH_SHAPE, writeRandomModel } from "../src/inference/random-model.js";
import { ensureTinyModel } from "../src/inference/load-model.js";
import { createLogger } from "../src/log.js";
import { packageRoot } from "../src/paths.js";
import { benchStreamVsRaw } from "./stream-vs-raw.js";

const root = packageRoot();
const dataDir = join(root, ".psyche", "bench");
const modelPath = join(root, ".psyche", "models", "psyche-bench-0.5b.gguf");
const runs = Number(process.env.BENCH_RUNS ?? 15);
const maxTokens = Number(process.env.BENCH_TOKENS ?? 64);
const ttftRuns = Number(process.env.BENCH_TTFT_RUNS ?? 150);

mkdirSync(join(root, ".psyche", "models"), { recursive: true });
if (!existsSync(modelPath)) {
  const t = Date.now();
  process.stderr.write(`writing the bench model (${BENCH_SHAPE.name}) to ${modelPath}...\n`);
  writeRandomModel(modelPath, BENCH_SHAPE);
  process.stderr.write(`  done in ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
}

// On a small machine the model's threads and the server's one JS thread compete: measure with
// every core (the default) and with one core left to the server.
const cores = availableParallelism();
const threadCounts = [...new Set([cores, Math.max(1, cores - 1)])];
const log = createLogger("warn");
const measured = [];
for (const threads of threadCounts) {
  const config = loadConfig({ dataDir, model: modelPath, port: 0, dbPort: 0, logLevel: "warn", quiet: true, threads }, {});
  const engine = await createLlamaEngine(config, log);
  process.stderr.write(`stream vs raw: ${runs} runs of ${maxTokens} tokens and ${ttftRuns} of 1, ${threads} threads\n`);
  measured.push({ model: BENCH_SHAPE.name, threads, stream: await benchStreamVsRaw(config, log, engine, runs, maxTokens, ttftRuns) });
}
// The bench model's own time to first token swings by tens of ms from run to run on a shared
// machine, more than the overhead being measured. The tiny model's barely moves, so the same
// measurement on it shows what Psyche's path adds with little noise.
{
  const tinyRuns = 3 * runs;
  const config = loadConfig({ dataDir, model: ensureTinyModel(dataDir), port: 0, dbPort: 0, logLevel: "warn", quiet: true, threads: 1 }, {});
  const engine = await createLlamaEngine(config, log);
  process.stderr.write(`stream vs raw (tiny model): ${tinyRuns} runs of ${maxTokens} tokens and ${ttftRuns} of 1, 1 thread\n`);
  measured.push({ model: "psyche-tiny", threads: 1, stream: await benchStreamVsRaw(config, log, engine, tinyRuns, maxTokens, ttftRuns) });
}

const machine = `${cpus()[0]?.model ?? "cpu"}, ${cores} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const results = { date: new Date().toISOString(), machine, runs, maxTokens, ttftRuns, measured };
writeFileSync(join(root, "bench", "results", "latest.json"), `${JSON.stringify(results, null, 2)}\n`);

const f1 = (x: number) => x.toFixed(1);
const pass = (ok: boolean) => (ok ? "yes" : "**no**");
const rows = measured.flatMap(({ model, threads, stream }) => [
  `| ${model} | ${threads} | decode tokens/s | ${f1(stream.raw.tokensPerSecond)} | ${f1(stream.http.tokensPerSecond)} | ${(stream.httpShareOfRawTokensPerSecond * 100).toFixed(1)}% of raw | >= 95% | ${pass(stream.httpShareOfRawTokensPerSecond >= 0.95)} |`,
  `| ${model} | ${threads} | time to first token (ms) | ${f1(stream.raw.ttftMs)} | ${f1(stream.http.ttftMs)} | +${f1(stream.ttftOverheadMs)} ms (IQR ${f1(stream.ttftOverheadIqrMs[0])} to ${f1(stream.ttftOverheadIqrMs[1])}) | < 15 ms | ${pass(stream.ttftOverheadMs < 15)} |`,
]);
const table = [
  `Measured ${results.date.slice(0, 10)} on ${machine}; random-weight models, raw and HTTP alternating, the client in its own thread. Decode rates: medians of ${runs} runs of ${maxTokens} tokens per bench-model row (${3 * runs} for the tiny model). Time to first token: ${ttftRuns} pairs of one-token replies per row; the result is the median of paired differences (each HTTP run minus the raw run just before it), with their interquartile range.`,
  "",
  "| model | threads | measure | raw node-llama-cpp | through HTTP (SSE) | result | target | met |",
  "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows,
].join("\n");
writeFileSync(join(root, "bench", "results", "latest.md"), `${table}\n`);

const readmePath = join(root, "README.md");
const readme = readFileSync(readmePath, "utf8");
const start = "<!-- bench:start -->";
const end = "<!-- bench:end -->";
if (readme.includes(start) && readme.includes(end)) {
  writeFileSync(readmePath, `${readme.slice(0, readme.indexOf(start) + start.length)}\n${table}\n${readme.slice(readme.indexOf(end))}`);
}
process.stdout.write(`${table}\n`);

// Benchmark v0: raw node-llama-cpp decoding vs the same model streamed through Psyche's HTTP
// path (web -> pg-boss -> worker -> turn_events -> SSE), in one process, one run, same engine.
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import type { Generator, InferenceEngine, PromptMessage } from "../src/inference/engine.js";
import { buildPrompt } from "../src/conversation/run-turn.js";
import type { Config } from "../src/config.js";
import type { Logger } from "../src/log.js";
import { serve } from "../src/processes/serve.js";

export interface Sample {
  ttftMs: number;
  tokensPerSecond: number;
  tokens: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const quartiles = (xs: number[]): [number, number] => {
  const s = [...xs].sort((a, b) => a - b);
  return [s[Math.floor((s.length - 1) / 4)]!, s[Math.ceil(((s.length - 1) * 3) / 4)]!];
};

/** Tokens per second over the decode phase: tokens after the first, over the time after it. */
const decodeRate = (tokens: number, firstAt: number, lastAt: number) => (lastAt > firstAt ? ((tokens - 1) * 1000) / (lastAt - firstAt) : 0);

async function rawSample(model: Generator, messages: PromptMessage[], maxTokens: number): Promise<Sample> {
  const start = performance.now();
  let firstAt = 0;
  let lastAt = 0;
  const result = await model.generate({
    messages,
    maxTokens,
    seed: 1,
    onText: () => {
      lastAt = performance.now();
      if (!firstAt) firstAt = lastAt;
    },
  });
  return {
    ttftMs: firstAt - start,
    tokensPerSecond: decodeRate(result.completionTokens, firstAt, lastAt),
    tokens: result.completionTokens,
  };
}

/** Runs the streaming client in its own thread (bench/http-client-thread.ts). */
async function httpSample(client: Worker, question: string, maxTokens: number): Promise<Sample> {
  const reply = once(client, "message");
  client.postMessage({ question, maxTokens });
  const [r] = (await reply) as [{ ttftMs: number; firstAt: number; lastAt: number; tokens: number }];
  return { ttftMs: r.ttftMs, tokensPerSecond: decodeRate(r.tokens, r.firstAt, r.lastAt), tokens: r.tokens };
}

export interface StreamBenchResult {
  runs: number;
  maxTokens: number;
  /** Time-to-first-token pairs, from short requests of their own (many, to pin the median). */
  ttftRuns: number;
  raw: { ttftMs: number; tokensPerSecond: number };
  http: { ttftMs: number; tokensPerSecond: number };
  httpShareOfRawTokensPerSecond: number;
  /** Median over TTFT runs of (HTTP TTFT - raw TTFT), each pair measured back to back. */
  ttftOverheadMs: number;
  /** 25th and 75th percentiles of those paired differences: how far to trust the median. */
  ttftOverheadIqrMs: [number, number];
  samples: { raw: Sample[]; http: Sample[]; ttftRaw: number[]; ttftHttp: number[] };
}

/**
 * Raw and HTTP alternate on the same chat sequence, so drift on a shared machine hits both
 * alike. Each question starts with its path's name: both diverge from the cached prefix (the
 * persona) at the same token, so both evaluate the same amount of prompt. Pair 0 warms up.
 */
async function pairs(config: Config, model: Generator, client: Worker, runs: number, maxTokens: number) {
  const raw: Sample[] = [];
  const http: Sample[] = [];
  for (let i = 0; i <= runs; i++) {
    const question = (path: string) => `${path} asks, ${i}: what did you dream about last night, and why?`;
    const r = await rawSample(model, buildPrompt(config.persona, [{ role: "user", content: question("raw") }]), maxTokens);
    const h = await httpSample(client, question("web"), maxTokens);
    if (i > 0) {
      raw.push(r);
      http.push(h);
    }
  }
  return { raw, http };
}

/**
 * Decode rates come from `runs` pairs of `maxTokens`; time to first token from `ttftRuns`
 * pairs of one-token replies, which are cheap enough to take by the hundred: the bench
 * model's own prompt evaluation varies by tens of ms per run, and only many pairs pin the
 * median of the difference.
 */
export async function benchStreamVsRaw(
  config: Config,
  log: Logger,
  engine: InferenceEngine,
  runs: number,
  maxTokens: number,
  ttftRuns: number,
): Promise<StreamBenchResult> {
  const psyche = await serve(config, log, { engine });
  try {
    // The thread runs compiled JS: npm run bench builds dist/ first.
    const clientFile = new URL(
      import.meta.url.endsWith(".ts") ? "../dist/bench/http-client-thread.js" : "./http-client-thread.js",
      import.meta.url,
    );
    const client = new Worker(clientFile, { workerData: { baseURL: `${psyche.url}/v1` } });
    await once(client, "online");
    try {
      // Raw: the worker's own scheduler, with no server around it (the slots are the same).
      const model = psyche.worker.scheduler;
      const { raw, http } = await pairs(config, model, client, runs, maxTokens);
      const first = await pairs(config, model, client, ttftRuns, 1);
      const ttftRaw = first.raw.map((s) => s.ttftMs);
      const ttftHttp = first.http.map((s) => s.ttftMs);
      const diffs = ttftHttp.map((h, i) => h - ttftRaw[i]!);
      const rawTps = median(raw.map((s) => s.tokensPerSecond));
      const httpTps = median(http.map((s) => s.tokensPerSecond));
      return {
        runs,
        maxTokens,
        ttftRuns,
        raw: { ttftMs: median(ttftRaw), tokensPerSecond: rawTps },
        http: { ttftMs: median(ttftHttp), tokensPerSecond: httpTps },
        httpShareOfRawTokensPerSecond: httpTps / rawTps,
        ttftOverheadMs: median(diffs),
        ttftOverheadIqrMs: quartiles(diffs),
        samples: { raw, http, ttftRaw, ttftHttp },
      };
    } finally {
      await client.terminate();
    }
  } finally {
    await psyche.stop(); // also disposes the engine, which serve now holds
  }
}

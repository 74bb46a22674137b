// Where a decode step's time goes on the tiny model (issue "Short steps at the engine's speed"):
// Psyche's engine alone (no server), one stream and several at once, after a warm-up. The
// context's native calls are timed as the decode loop makes them: `decodeBatch` (the model's
// step, on libuv's pool) and each sequence's `sampleToken`, or `decodeBatchAndSample` (the step
// with its samples, one hop: an engine built here). What is left of a step's period is
// JavaScript on the main thread between them: node-llama-cpp's per-token work in LlamaChat
// (stop triggers, segments, detokenizing), Psyche's relay, the batch gather's wait. A bench-only
// probe: it wraps the calls on the context's native object, which Psyche itself never does
// (src/inference/llama-internals.ts lists what Psyche relies on).
import { performance } from "node:perf_hooks";
import type { LlamaContext } from "node-llama-cpp";
import type { LlamaEngine } from "../src/inference/llama-engine.js";
import { sampleInDecode } from "../src/inference/llama-internals.js";
import { standaloneScheduler } from "../src/inference/scheduler.js";

export interface StepCosts {
  /** Chats generating at once. */
  streams: number;
  /**
   * How a batch's sequences were sampled: in the decode's own native call, in one call of their
   * own after it (both an engine built here), or one call each (node-llama-cpp's own).
   */
  sampling?: "in the decode" | "one call" | "one each";
  /** Steps measured (batches decoded), and tokens made. */
  steps: number;
  tokens: number;
  /** Medians per step, microseconds: the period from one decode's start to the next's. */
  periodUs: number;
  /** The native decode, as awaited (its hop to libuv's pool and back included). */
  decodeUs: number;
  /** From the decode's end to the batch's last sample's end (0 where sampled in the decode). */
  sampleUs: number;
  /** From the last sample's end to the next decode's start: JavaScript between two steps. */
  betweenUs: number;
  /** Tokens per second, all streams together. */
  tokensPerSecond: number;
}

interface Call {
  /** A decode that sampled too (`decodeBatchAndSample`) is a "decode" with `sampled`. */
  kind: "decode" | "sample";
  sampled?: boolean;
  start: number;
  end: number;
}

type Native = Record<string, (...args: unknown[]) => unknown>;

/**
 * Wraps the context's native decode and sample calls; the calls recorded while `recording` holds.
 * With `recording.oneEach`, samples skip the engine's one-call sampling (src/inference/llama-internals.ts)
 * for the addon's own one-sample call, so one engine is measured both ways.
 */
function probe(context: LlamaContext): { calls: Call[]; recording: { on: boolean; oneEach: boolean } } {
  const native = (context as unknown as { _ctx: Native })._ctx;
  const calls: Call[] = [];
  const recording = { on: false, oneEach: false };
  const ownSample = (Object.getPrototypeOf(native) as Native).sampleToken!.bind(native);
  for (const [name, kind] of [
    ["decodeBatch", "decode"],
    ["decodeBatchAndSample", "decode"],
    ["sampleToken", "sample"],
  ] as const) {
    if (typeof native[name] !== "function") continue;
    const current = native[name]!.bind(native);
    const original = (...args: unknown[]) => (kind === "sample" && recording.oneEach ? ownSample : current)(...args);
    // The addon's methods are read-only on its prototype: defined again on the object itself.
    Object.defineProperty(native, name, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]) => {
        const start = performance.now();
        const out = original(...args) as Promise<unknown>;
        if (!recording.on) return out;
        return out.then((v) => {
          calls.push({ kind, start, end: performance.now(), sampled: name === "decodeBatchAndSample" });
          return v;
        });
      },
    });
  }
  return { calls, recording };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : 0;
};

/** Steps as decode, then the samples until the next decode. */
function stepsOf(calls: Call[]): { period: number[]; decode: number[]; sample: number[]; between: number[] } {
  const sorted = [...calls].sort((a, b) => a.start - b.start);
  const decodes = sorted.filter((c) => c.kind === "decode");
  const out = { period: [] as number[], decode: [] as number[], sample: [] as number[], between: [] as number[] };
  for (let i = 0; i + 1 < decodes.length; i++) {
    const d = decodes[i]!;
    const next = decodes[i + 1]!;
    const samples = sorted.filter((c) => c.kind === "sample" && c.start >= d.end && c.start < next.start);
    if (!samples.length && !d.sampled) continue;
    const lastSample = Math.max(d.end, ...samples.map((s) => s.end));
    out.period.push(next.start - d.start);
    out.decode.push(d.end - d.start);
    out.sample.push(lastSample - d.end);
    out.between.push(next.start - lastSample);
  }
  return out;
}

export async function benchStepCosts(
  engine: LlamaEngine,
  opts: { streams: number[]; maxTokens: number; warmupTokens: number; rounds: number },
): Promise<StepCosts[]> {
  const context = (engine as unknown as { context: LlamaContext }).context;
  const { calls, recording } = probe(context);
  // Through the scheduler, as the worker generates: slots chosen and claimed, as in a turn.
  const model = standaloneScheduler(engine);
  const ask = (i: number, maxTokens: number) =>
    model.generate({ messages: [{ role: "user", content: `Tell me a long story, number ${i}.` }], maxTokens, seed: i, onText: () => {} });
  for (let made = 0, i = 0; made < opts.warmupTokens; i++) made += (await ask(i, 512)).completionTokens;
  const rows: StepCosts[] = [];
  const counts = engine.oneCallSampling;
  const ways: StepCosts["sampling"][] = engine.samplesInDecode
    ? ["in the decode", "one call", "one each"]
    : counts
      ? ["one call", "one each"]
      : ["one each"];
  // Both ways in turn, round by round, so that a noisy moment of the machine hits both; the same
  // seeds each way, so both make the same replies.
  type Acc = { period: number[]; decode: number[]; sample: number[]; between: number[]; tokens: number; wall: number };
  for (const streams of opts.streams) {
    const acc = new Map<StepCosts["sampling"], Acc>(
      ways.map((w) => [w, { period: [], decode: [], sample: [], between: [], tokens: 0, wall: 0 }]),
    );
    for (let round = 0; round < opts.rounds; round++)
      for (const sampling of round % 2 ? [...ways].reverse() : ways) {
        const a = acc.get(sampling)!;
        calls.length = 0;
        recording.oneEach = sampling === "one each";
        if (counts && engine.samplesInDecode) await sampleInDecode(context, counts, sampling === "in the decode");
        recording.on = true;
        const started = performance.now();
        const replies = await Promise.all(Array.from({ length: streams }, (_, i) => ask(1000 + round * 100 + i, opts.maxTokens)));
        a.wall += performance.now() - started;
        recording.on = false;
        a.tokens += replies.reduce((n, r) => n + r.completionTokens, 0);
        const s = stepsOf(calls);
        for (const k of ["period", "decode", "sample", "between"] as const) a[k].push(...s[k]);
      }
    const us = (xs: number[]) => Math.round(median(xs) * 1000);
    for (const [sampling, a] of acc)
      rows.push({
        streams,
        sampling,
        steps: a.period.length,
        tokens: a.tokens,
        periodUs: us(a.period),
        decodeUs: us(a.decode),
        sampleUs: us(a.sample),
        betweenUs: us(a.between),
        tokensPerSecond: Math.round(a.tokens / (a.wall / 1000)),
      });
  }
  if (counts && engine.samplesInDecode) await sampleInDecode(context, counts, true);
  return rows;
}

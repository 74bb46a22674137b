// Wake benchmark: a chat arrives while a dream is generating. Wake latency, two ways: from the
// chat request leaving the client to the dream stopped (the journal's ended_at, which is
// written just after), and from the worker's receipt of the chat's signal (the journal's
// wake_latency_ms); and the chat's time to first token with a dream running vs with the
// worker idle, in one run. With `arrivals` > 1, that many chats arrive at once (a burst: an
// agent and its side requests, several clients): the dream must wake as fast, and the time to
// first token is the slowest of them, since a reverie runs only when no chat does.
import OpenAI from "openai";
import type { Config } from "../src/config.js";
import type { InferenceEngine } from "../src/inference/engine.js";
import type { Logger } from "../src/log.js";
import { serve } from "../src/processes/serve.js";

export interface Spread {
  p50: number;
  p95: number;
  max: number;
}

export interface WakeResult {
  trials: number;
  /** Chats arriving at once in each trial. */
  arrivals: number;
  wakeLatencyMs: Spread;
  /** From the chat request's start to the dream's journal entry closed. */
  wakeFromRequestMs: Spread;
  ttftIdleMs: Spread;
  ttftDreamingMs: Spread;
  /** p95 with a dream running minus p95 idle. */
  ttftGrowthP95Ms: number;
}

const spread = (xs: number[]): Spread => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
  return { p50: at(0.5), p95: at(0.95), max: s[s.length - 1]! };
};

async function ttft(client: OpenAI, question: string): Promise<number> {
  const start = performance.now();
  const stream = await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: question }],
    max_tokens: 2,
    stream: true,
  });
  let first = 0;
  for await (const chunk of stream) if (!first && chunk.choices[0]?.delta.content) first = performance.now();
  return first - start;
}

/** The slowest first token of `n` chats sent at once. */
async function burstTtft(client: OpenAI, n: number, question: string): Promise<number> {
  return Math.max(...(await Promise.all(Array.from({ length: n }, (_, k) => ttft(client, `${question} (${k + 1} of ${n})`)))));
}

export async function benchWake(config: Config, log: Logger, engine: InferenceEngine, trials: number, arrivals = 1): Promise<WakeResult> {
  const psyche = await serve(config, log, { engine });
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "bench", maxRetries: 0 });
  const pool = psyche.db.pool;
  const wake: number[] = [];
  const fromRequest: number[] = [];
  const idle: number[] = [];
  const dreaming: number[] = [];
  try {
    for (let i = 0; i <= trials; i++) {
      const idleTtft = await burstTtft(client, arrivals, `idle ${i}: what did you dream about?`);
      // Each trial a fresh dream, as before dreams resumed: the last trial's paused one (which the
      // next dream would continue, with its text so far to read again) is closed.
      await pool.query("update dream_journal set status = 'interrupted' where status = 'paused'");
      const res = await fetch(`${psyche.url}/dream/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "dream", max_tokens: 4000 }),
      });
      const jobId = ((await res.json()) as { data: { id: string }[] }).data[0]!.id;
      for (;;) {
        const row = await pool.query("select 1 from dream_journal where job_id = $1", [jobId]);
        if (row.rowCount) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      // Arrive at a random point: in the dream's prompt reading or its decoding.
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 800));
      const asked = Date.now();
      const dreamTtft = await burstTtft(client, arrivals, `dream ${i}: what did you dream about?`);
      let latency: number | null = null;
      let sinceAsked: number | null = null;
      for (;;) {
        const row = await pool.query<{ status: string; wake_latency_ms: number | null; ended: number | null }>(
          "select status, wake_latency_ms, extract(epoch from ended_at)::float8 * 1000 as ended from dream_journal where job_id = $1",
          [jobId],
        );
        if (row.rows[0]?.status !== "dreaming") {
          latency = row.rows[0]?.wake_latency_ms ?? null;
          sinceAsked = row.rows[0]?.status === "paused" && row.rows[0].ended !== null ? row.rows[0].ended - asked : null;
          break;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      if (i === 0) continue; // warm-up
      idle.push(idleTtft);
      dreaming.push(dreamTtft);
      if (latency !== null) wake.push(latency);
      if (sinceAsked !== null) fromRequest.push(sinceAsked);
    }
  } finally {
    await psyche.stop();
  }
  const ttftIdleMs = spread(idle);
  const ttftDreamingMs = spread(dreaming);
  return {
    trials,
    arrivals,
    wakeLatencyMs: spread(wake),
    wakeFromRequestMs: spread(fromRequest),
    ttftIdleMs,
    ttftDreamingMs,
    ttftGrowthP95Ms: ttftDreamingMs.p95 - ttftIdleMs.p95,
  };
}

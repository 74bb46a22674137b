// Reverie budget benchmark: a user who chats every few seconds and never goes quiet long enough
// to put the server to sleep. Between chats the scheduler may dream within its share of the
// model's time (src/dreams/scheduler.ts); every chat wakes what runs. Measured from the
// database's own record of each stretch (dream_slices): the share of time reveries took, over
// the whole run and in the worst window; how fast a chat woke a stretch (the chat request leaving
// the client to the stretch's end, as the wake benchmark measures it); and the chats' time to
// first token with a stretch running and without.
import OpenAI from "openai";
import type { Config } from "../src/config.js";
import type { InferenceEngine } from "../src/inference/engine.js";
import type { Logger } from "../src/log.js";
import { serve } from "../src/processes/serve.js";
import type { Spread } from "./wake.js";

export interface BudgetResult {
  /** The budget asked for: a share of each window of this many seconds. */
  share: number;
  windowSeconds: number;
  seconds: number;
  chats: number;
  /** Reveries' time over the whole run, and in the worst window (ending at a stretch's end or a chat). */
  shareUsed: number;
  shareWorstWindow: number;
  stretches: number;
  /** Journal entries the stretches belong to, and how many of them were continued after a pause. */
  entries: number;
  resumed: number;
  tokens: number;
  /** Chats that arrived while a stretch ran: from the request to the stretch's end. */
  wakeFromRequestMs: Spread | null;
  ttftQuietMs: Spread;
  ttftDreamingMs: Spread | null;
}

const spread = (xs: number[]): Spread => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
  return { p50: at(0.5), p95: at(0.95), max: s[s.length - 1]! };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `config` must have the scheduler on, and a dream delay longer than the gaps between chats. */
export async function benchBudget(config: Config, log: Logger, engine: InferenceEngine, seconds: number): Promise<BudgetResult> {
  const psyche = await serve(config, log, { engine });
  const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "bench", maxRetries: 0 });
  const pool = psyche.db.pool;
  try {
    // Dreams only: no idle thoughts or reflections, and the first stretch soon after a chat.
    const patched = await fetch(`${psyche.url}/dream/config`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ idle_thoughts: false, reflection_threshold: 0, idle_thought_delay_seconds: 2, wake_lock_seconds: 1 }),
    });
    if (!patched.ok) throw new Error(`PATCH /dream/config: ${patched.status} ${await patched.text()}`);
    const chats: { at: number; ttft: number }[] = [];
    const start = Date.now();
    for (let i = 0; Date.now() - start < seconds * 1000; i++) {
      // A user who answers every 3 to 9 s: never quiet for the dream delay.
      await sleep(3000 + Math.random() * 6000);
      const at = Date.now();
      const stream = await client.chat.completions.create({
        model: "psyche",
        messages: [{ role: "user", content: `message ${i}: and then?` }],
        max_tokens: 8,
        stream: true,
      });
      let first = 0;
      for await (const chunk of stream) if (!first && chunk.choices[0]?.delta.content) first = Date.now();
      chats.push({ at, ttft: first - at });
    }
    const end = Date.now();
    await sleep(500);
    const slices = (
      await pool.query<{ s: number; e: number; journal_id: string }>(
        `select extract(epoch from s.started_at)::float8 * 1000 as s,
                extract(epoch from coalesce(s.ended_at, now()))::float8 * 1000 as e, s.journal_id::text
           from dream_slices s where s.started_at >= to_timestamp($1::float8 / 1000) order by s.started_at`,
        [start],
      )
    ).rows;
    const entries = (
      await pool.query<{ resumes: number; tokens: number }>("select resumes, tokens from dream_journal where id = any($1::uuid[])", [
        [...new Set(slices.map((x) => x.journal_id))],
      ])
    ).rows;
    const window = config.dreamBudgetWindowSeconds * 1000;
    const within = (from: number, to: number) => slices.reduce((sum, x) => sum + Math.max(0, Math.min(x.e, to) - Math.max(x.s, from)), 0);
    const ends = [...slices.map((x) => x.e), ...chats.map((c) => c.at)].filter((t) => t - window >= start);
    const running = (t: number) => slices.find((x) => x.s <= t && t < x.e);
    const woke = chats.flatMap((c) => {
      const x = running(c.at);
      return x ? [x.e - c.at] : [];
    });
    const dreamingTtft = chats.filter((c) => running(c.at)).map((c) => c.ttft);
    const quietTtft = chats.filter((c) => !running(c.at)).map((c) => c.ttft);
    return {
      share: config.dreamBudget,
      windowSeconds: config.dreamBudgetWindowSeconds,
      seconds: Math.round((end - start) / 1000),
      chats: chats.length,
      shareUsed: within(start, end) / (end - start),
      shareWorstWindow: Math.max(0, ...ends.map((t) => within(t - window, t) / window)),
      stretches: slices.length,
      entries: entries.length,
      resumed: entries.filter((e) => e.resumes > 0).length,
      tokens: entries.reduce((sum, e) => sum + e.tokens, 0),
      wakeFromRequestMs: woke.length ? spread(woke) : null,
      ttftQuietMs: spread(quietTtft.length ? quietTtft : [0]),
      ttftDreamingMs: dreamingTtft.length ? spread(dreamingTtft) : null,
    };
  } finally {
    await psyche.stop();
  }
}

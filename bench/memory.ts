// Memory benchmark: search latency at 10k and 100k memories, and store throughput with 1 and 2
// embedding threads. Runs the real stack (serve: embedded Postgres, pgvector, piscina).
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../src/config.js";
import { loadConfig } from "../src/config.js";
import type { Pool } from "../src/db/pool.js";
import { toVector } from "../src/db/sql/memories.js";
import { tidyTextIndex } from "../src/db/sql/memory-terms.js";
import type { EmbedSpec } from "../src/memory/embed-task.js";
import { type Embedder, ThreadEmbedder } from "../src/memory/embedder.js";
import { terms } from "../src/memory/analyzer.js";
import { Memory } from "../src/memory/memory.js";
import { ThreadScorer } from "../src/memory/scorer.js";
import type { Logger } from "../src/log.js";
import { serve } from "../src/processes/serve.js";
import { random, syntheticLongQuery, syntheticMemory, syntheticQuery } from "./synthetic-memories.js";

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};

/**
 * Bulk-loads `n` synthetic memories (ages spread over a year) through the embedder's threads,
 * then puts them in the full-text index as a server does with memories it finds unindexed.
 */
export async function load(pool: Pool, embedder: Embedder, memory: Memory, n: number, seed: number): Promise<void> {
  const r = random(seed);
  for (let done = 0; done < n; done += 1000) {
    const texts = Array.from({ length: Math.min(1000, n - done) }, () => syntheticMemory(r));
    const vectors = await embedder.embed(texts);
    await pool.query(
      `insert into memories (kind, content, importance, embedding, embedder, created_at, last_accessed_at)
       select 'episodic', c, i, e::vector, $4, now() - make_interval(secs => a), now() - make_interval(secs => a)
       from unnest($1::text[], $2::real[], $3::text[], $5::float8[]) as x(c, i, e, a)`,
      [texts, texts.map(() => Math.round(r() * 100) / 100), vectors.map(toVector), embedder.id, texts.map(() => r() * 365 * 86400)],
    );
  }
  await memory.indexPending(2000);
}

export interface SearchResult {
  memories: number;
  queries: number;
  p50Ms: number;
  p95Ms: number;
  /** The same for long queries (several questions in one message). */
  long?: { p50Ms: number; p95Ms: number; terms: number };
  loadSeconds: number;
}

/** Memory.search (embed the query in a thread, kNN + full text, rank, mark accessed), timed. */
export async function benchSearch(base: Config, log: Logger, sizes: number[], queries: number): Promise<SearchResult[]> {
  const dataDir = join(base.dataDir, "memory-search");
  rmSync(dataDir, { recursive: true, force: true });
  const config = loadConfig({ ...base, dataDir, embeddingModel: "builtin", recallPromptTokens: 0 }, {});
  const psyche = await serve(config, log);
  const results: SearchResult[] = [];
  try {
    let loaded = 0;
    for (const size of sizes) {
      const t0 = performance.now();
      await load(psyche.db.pool, psyche.mem.embedder, psyche.mem.memory, size - loaded, size);
      await psyche.db.pool.query("analyze memories");
      await tidyTextIndex(psyche.db.pool);
      const loadSeconds = (performance.now() - t0) / 1000;
      loaded = size;
      process.stderr.write(`  ${size} memories loaded in ${loadSeconds.toFixed(1)} s\n`);
      const r = random(7);
      for (let i = 0; i < 20; i++) await psyche.mem.memory.search(syntheticQuery(r), 10);
      const times: number[] = [];
      for (let i = 0; i < queries; i++) {
        const q = syntheticQuery(r);
        const t = performance.now();
        await psyche.mem.memory.search(q, 10);
        times.push(performance.now() - t);
      }
      const longTimes: number[] = [];
      const longTerms: number[] = [];
      for (let i = 0; i < queries; i++) {
        const q = syntheticLongQuery(r);
        longTerms.push(new Set(terms(q)).size);
        const t = performance.now();
        await psyche.mem.memory.search(q, 10);
        longTimes.push(performance.now() - t);
      }
      const long = { p50Ms: percentile(longTimes, 50), p95Ms: percentile(longTimes, 95), terms: percentile(longTerms, 50) };
      results.push({ memories: size, queries, p50Ms: percentile(times, 50), p95Ms: percentile(times, 95), long, loadSeconds });
    }
  } finally {
    await psyche.stop();
  }
  return results;
}

export interface StoreResult {
  embedder: string;
  threads: number;
  memories: number;
  perSecond: number;
}

/**
 * Memory.remember (embed, novelty, significance and affect in threads, duplicate check, insert)
 * for `n` texts, 8 at a time, with each thread count.
 */
export async function benchStore(base: Config, log: Logger, spec: EmbedSpec, threadCounts: number[], n: number): Promise<StoreResult[]> {
  const dataDir = join(base.dataDir, "memory-store");
  rmSync(dataDir, { recursive: true, force: true });
  const config = loadConfig({ ...base, dataDir, embeddingModel: "builtin", recallPromptTokens: 0 }, {});
  const psyche = await serve(config, log);
  const results: StoreResult[] = [];
  const scorer = new ThreadScorer(1);
  try {
    for (const threads of threadCounts) {
      const embedder = await ThreadEmbedder.start(spec, threads);
      try {
        const memory = new Memory({
          pool: psyche.db.pool,
          embedder,
          scorer,
          settings: {
            rank: {
              weights: { vector: 0.2, conversation: 0.5, recency: 0.1, importance: 0.1 },
              recencyHalfLifeHours: 24,
              minSimilarity: 0.1,
              conversationSeats: 0.5,
            },
            duplicateSimilarity: 0.95,
          },
        });
        const r = random(1000 + threads);
        const texts = Array.from({ length: n }, () => syntheticMemory(r));
        await Promise.all(
          texts.slice(0, 8).map((content) => memory.remember({ kind: "episodic", content: `warm-up ${content}`, sourceKind: "api" })),
        );
        const t0 = performance.now();
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < texts.length) {
              const content = texts[next++]!;
              await memory.remember({ kind: "episodic", content, sourceKind: "api" });
            }
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        results.push({ embedder: embedder.id, threads, memories: n, perSecond: n / seconds });
        process.stderr.write(`  store with ${embedder.id}, ${threads} thread(s): ${(n / seconds).toFixed(1)}/s\n`);
      } finally {
        await embedder.close();
      }
    }
  } finally {
    await scorer.close();
    await psyche.stop();
  }
  return results;
}

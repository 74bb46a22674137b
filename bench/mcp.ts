// MCP benchmark: assemble_context as a prompt hook calls it (one POST to /mcp, from a client
// in its own thread) with 10k memories and a few recent insights, and the same assembly in
// process, so the HTTP and MCP layers' share shows.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { Config } from "../src/config.js";
import { loadConfig } from "../src/config.js";
import type { Logger } from "../src/log.js";
import { assembleContext } from "../src/memory/assemble-context.js";
import { serve } from "../src/processes/serve.js";
import { load, percentile } from "./memory.js";
import { random, syntheticMemory, syntheticQuery } from "./synthetic-memories.js";

export interface McpBenchResult {
  memories: number;
  calls: number;
  maxTokens: number;
  /** One POST of assemble_context to /mcp, request to parsed reply. */
  httpMs: { p50: number; p95: number; max: number };
  /** assembleContext called in the server's process: embedding, search, insights, markdown. */
  inProcessMs: { p50: number; p95: number };
  /** Memories per answer (median), to show the answers were not empty. */
  memoriesPerAnswer: number;
}

const stats = (xs: number[]) => ({ p50: percentile(xs, 50), p95: percentile(xs, 95), max: Math.max(...xs) });

export async function benchMcp(base: Config, log: Logger, memories: number, calls: number, maxTokens = 800): Promise<McpBenchResult> {
  const dataDir = join(base.dataDir, "mcp");
  rmSync(dataDir, { recursive: true, force: true });
  const config = loadConfig({ ...base, dataDir, embeddingModel: "builtin", recallPromptTokens: 0 }, {});
  const psyche = await serve(config, log);
  const clientFile = new URL(
    import.meta.url.endsWith(".ts") ? "../dist/bench/mcp-client-thread.js" : "./mcp-client-thread.js",
    import.meta.url,
  );
  const client = new Worker(clientFile, { workerData: { url: `${psyche.url}/mcp` } });
  const ask = (query: string) =>
    new Promise<{ ms: number; memories: number }>((resolve, reject) => {
      client.once("message", resolve);
      client.once("error", reject);
      client.postMessage({ query, maxTokens });
    });
  try {
    await load(psyche.db.pool, psyche.mem.embedder, psyche.mem.memory, memories, 11);
    const r = random(5);
    for (let i = 0; i < 5; i++) {
      await psyche.mem.memory.remember({
        kind: "insight",
        content: `Insight: ${syntheticMemory(r)}`,
        importance: 0.8,
        sourceKind: "dream",
      });
    }
    await psyche.db.pool.query("analyze memories");
    for (let i = 0; i < 20; i++) await ask(syntheticQuery(r));
    const http: number[] = [];
    const found: number[] = [];
    const local: number[] = [];
    for (let i = 0; i < calls; i++) {
      const query = syntheticQuery(r);
      const answer = await ask(query);
      http.push(answer.ms);
      found.push(answer.memories);
      const t = performance.now();
      await assembleContext(psyche.mem.memory, { query: syntheticQuery(r), maxTokens, limit: 10 });
      local.push(performance.now() - t);
    }
    const { p50, p95 } = stats(local);
    return { memories, calls, maxTokens, httpMs: stats(http), inProcessMs: { p50, p95 }, memoriesPerAnswer: percentile(found, 50) };
  } finally {
    await client.terminate();
    await psyche.stop();
  }
}

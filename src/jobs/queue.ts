// pg-boss set-up: one queue for the inference worker, ordered by priority (ARCHITECTURE.md §3).
import PgBoss from "pg-boss";
import { z } from "zod";
import type { Logger } from "../log.js";
import { createPool } from "../db/pool.js";

export const INFERENCE_QUEUE = "psyche-inference";

/** Higher runs first. Chat always wins. */
export const Priority = {
  chat: 40,
  idleThought: 30,
  dream: 20,
  maintenance: 10,
} as const;

export const ChatJobSchema = z.object({ kind: z.literal("chat"), turnId: z.string().uuid() });
export type ChatJob = z.infer<typeof ChatJobSchema>;
export const InferenceJobSchema = z.discriminatedUnion("kind", [ChatJobSchema]);
export type InferenceJob = z.infer<typeof InferenceJobSchema>;

export interface QueueOptions {
  connectionString: string;
  log: Logger;
  /** Run pg-boss's own maintenance (expiry, archiving) in this process. */
  supervise?: boolean;
  /** Connections pg-boss keeps. Default 4. */
  max?: number;
}

/**
 * Creates and starts pg-boss, installing its schema and our queue if needed. pg-boss runs on
 * a pool of its own whose parameterized queries are prepared statements; stopping pg-boss
 * (the `stopped` event) closes it.
 */
export async function startQueue(opts: QueueOptions): Promise<PgBoss> {
  const pool = createPool(opts.connectionString, opts.max ?? 4);
  const boss = new PgBoss({
    db: { executeSql: (text, values) => pool.query(text, values) },
    supervise: opts.supervise ?? false,
    schedule: false,
    migrate: true,
  });
  boss.on("error", (err) => opts.log.warn({ err }, "pg-boss error"));
  boss.on("stopped", () => void pool.end().catch(() => undefined));
  try {
    await boss.start();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  if (!(await boss.getQueue(INFERENCE_QUEUE))) {
    await createQueueOnce(boss);
  }
  return boss;
}

async function createQueueOnce(boss: PgBoss): Promise<void> {
  try {
    await boss.createQueue(INFERENCE_QUEUE, {
      name: INFERENCE_QUEUE,
      policy: "standard",
      // Retries after a dead worker are ours (see inference/reclaim.ts); pg-boss's retry is
      // the backstop for a worker that failed a job without marking its turn.
      retryLimit: 2,
      retryDelay: 1,
      expireInSeconds: 60 * 60,
    });
  } catch (err) {
    // Another process created it between our look and our create.
    if (!(await boss.getQueue(INFERENCE_QUEUE))) throw err;
  }
}

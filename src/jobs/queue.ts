// pg-boss set-up: the inference worker's queue, ordered by priority (docs/dreams.md), and
// the memory worker's two.
import { ScopeSchema } from "../scope.js";
import PgBoss from "pg-boss";
import { z } from "zod";
import type { Logger } from "../log.js";
import { ConversationIdSchema } from "../conversation-id.js";
import { createPool, type Queryable } from "../db/pool.js";
import type { ForeignStatement } from "../db/statement.js";
import { checkJobTable, indexLiveJobs } from "../db/sql/pgboss-jobs.js";

export const INFERENCE_QUEUE = "psyche-inference";
/** Memory formation after each turn: embedding, significance, mood (workers/memory-worker.ts). */
export const MEMORY_QUEUE = "psyche-memory";
/** Long background work on memories (re-embedding), at maintenance priority. */
export const MAINTENANCE_QUEUE = "psyche-maintenance";
/**
 * The payload of a Channel.memory signal for a maintenance job (a consolidation, a re-embedding);
 * without it the signal is for a turn's memory, and only that loop fetches (workers/memory-worker.ts).
 */
export const MAINTENANCE_SIGNAL = "maintenance";

/**
 * Every job is sent due a millisecond before its insert. pg-boss takes a job once
 * `start_after < now()`, and the embedded database's clock counts whole milliseconds (PGlite:
 * 180 of 200 jobs inserted and fetched back to back were not yet due, 2026-12-06): a worker
 * signalled for a job in the millisecond of its insert found nothing and waited for its next
 * poll, up to eight times --poll-ms (jobs/poll-backoff.ts). An interval, not a time: the
 * database's clock, not this process's, says when.
 */
export const DUE_AT_ONCE = { startAfter: "-1 millisecond" } as const;

/** Higher runs first. Chat always wins. */
export const Priority = {
  chat: 40,
  idleThought: 30,
  dream: 20,
  maintenance: 10,
} as const;

export const ChatJobSchema = z.object({ kind: z.literal("chat"), turnId: z.string().uuid() });
export type ChatJob = z.infer<typeof ChatJobSchema>;
const focus = z.string().max(500).nullish();
/** The scope a reverie draws on (src/scope.ts); unset: the scope of the newest memory, or the idle thought's conversation's. */
const scope = ScopeSchema.nullish();
const budget = {
  /** Token budget. */
  maxTokens: z.number().int().positive().max(8192).default(512),
  /** Time budget (s); unset: the worker's default. */
  maxSeconds: z
    .number()
    .int()
    .positive()
    .max(7 * 86_400)
    .optional(),
  temperature: z.number().min(0).max(2).optional(),
  /**
   * The reverie budget's share left (s; src/dreams/scheduler.ts): when it runs out first, a dream
   * or a reflection pauses, to be continued, and an idle thought ends.
   */
  sliceSeconds: z.number().positive().max(86_400).optional(),
};
/** A dream: seeded with recent, important and random memories, at a high temperature. */
export const DreamJobSchema = z.object({ kind: z.literal("dream"), focus, scope, ...budget });
export type DreamJob = z.infer<typeof DreamJobSchema>;
/** A short thought about a conversation gone quiet. */
// Conversation ids are the client's (conversation-id.ts), not always UUIDs: "conv-1" is one.
export const IdleThoughtJobSchema = z.object({ kind: z.literal("idle"), conversationId: ConversationIdSchema.nullish(), scope, ...budget });
export type IdleThoughtJob = z.infer<typeof IdleThoughtJobSchema>;
/** A reflection (Generative Agents): insights drawn from recent memories, or from those about `focus`. */
export const ReflectJobSchema = z.object({ kind: z.literal("reflect"), focus, scope, ...budget });
export type ReflectJob = z.infer<typeof ReflectJobSchema>;
/** Everything the worker runs on its dream sequence. */
export type ReverieJob = DreamJob | IdleThoughtJob | ReflectJob;
export const InferenceJobSchema = z.discriminatedUnion("kind", [ChatJobSchema, DreamJobSchema, IdleThoughtJobSchema, ReflectJobSchema]);
export type InferenceJob = z.infer<typeof InferenceJobSchema>;

export const RememberTurnJobSchema = z.object({ kind: z.literal("remember-turn"), turnId: z.string().uuid() });
export type RememberTurnJob = z.infer<typeof RememberTurnJobSchema>;
export const ReembedJobSchema = z.object({ kind: z.literal("reembed"), runId: z.string().uuid(), embedder: z.string().min(1) });
export type ReembedJob = z.infer<typeof ReembedJobSchema>;
/** Fold near-duplicate memories together (queued through the API or by the schedule). */
export const ConsolidateJobSchema = z.object({ kind: z.literal("consolidate"), similarity: z.number().min(0.5).max(1).optional() });
export type ConsolidateJob = z.infer<typeof ConsolidateJobSchema>;
/** The schedule's tick: consolidate when due and enabled, and write the mood's decay. */
export const MaintenanceTickJobSchema = z.object({ kind: z.literal("tick") });
export const MaintenanceJobSchema = z.discriminatedUnion("kind", [ReembedJobSchema, ConsolidateJobSchema, MaintenanceTickJobSchema]);
export type MaintenanceJob = z.infer<typeof MaintenanceJobSchema>;

/**
 * pg-boss's `db` option for a send or cancel inside the caller's transaction, so the job and
 * the rows it is about commit together or not at all.
 */
export const inTransactionDb = (client: Queryable) => ({ executeSql: (text: string, values: unknown[]) => client.query(text, values) });

/**
 * The statement `boss.send` runs to queue a job, with its values, for a caller that runs it
 * inside one of its own (db/sql/turns.ts, insertTurnWithMessages; db/statement.ts places it): pg-boss still works out the
 * job's retries, expiry and retention from its queue and its settings, and only where the
 * insert runs changes. Needs the job's id, as nothing is read back.
 */
export async function sendStatement(
  boss: PgBoss,
  name: string,
  data: object,
  options: PgBoss.SendOptions & { id: string },
): Promise<ForeignStatement> {
  const statements: ForeignStatement[] = [];
  const db = {
    executeSql: async (text: string, values: unknown[]) => {
      statements.push({ text, values });
      return { rows: [{ id: options.id }] };
    },
  };
  await boss.send(name, data, { ...DUE_AT_ONCE, ...options, db });
  if (statements.length !== 1) throw new Error(`pg-boss sent ${statements.length} statements for one job`);
  return statements[0]!;
}

export interface QueueOptions {
  connectionString: string;
  log: Logger;
  /** Run pg-boss's own maintenance (expiry, archiving) and its cron schedules in this process. */
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
    db: inTransactionDb(pool),
    supervise: opts.supervise ?? false,
    schedule: opts.supervise ?? false,
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
  await checkJobTable(pool);
  await indexLiveJobs(pool);
  // Retries after a dead worker are ours (see jobs/reclaim.ts); pg-boss's retry is the
  // backstop for a worker that failed a job without marking its turn.
  await createQueueOnce(boss, INFERENCE_QUEUE, { retryLimit: 2, retryDelay: 1, expireInSeconds: 60 * 60 });
  // Memory jobs are idempotent: a retry after a crash finishes what was left.
  await createQueueOnce(boss, MEMORY_QUEUE, { retryLimit: 5, retryDelay: 2, retryBackoff: true, expireInSeconds: 15 * 60 });
  await createQueueOnce(boss, MAINTENANCE_QUEUE, { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: 6 * 60 * 60 });
  return boss;
}

type QueueSettings = Pick<PgBoss.Queue, "retryLimit" | "retryDelay" | "retryBackoff" | "expireInSeconds">;

async function createQueueOnce(boss: PgBoss, name: string, settings: QueueSettings): Promise<void> {
  if (await boss.getQueue(name)) return;
  try {
    await boss.createQueue(name, { name, policy: "standard", ...settings });
  } catch (err) {
    // Another process created it between our look and our create.
    if (!(await boss.getQueue(name))) throw err;
  }
}

// The memory worker: forms a memory and moves the mood after each turn (off the reply's
// critical path); at maintenance priority it re-embeds, consolidates near-duplicates and, on
// pg-boss's schedule, writes the mood's decay; it purges soft-deleted memories and week-old events.
// Two loops, so a long re-embedding never delays memory formation.
import { rememberTurn } from "../src/memory/turn-memory.js";
import type PgBoss from "pg-boss";
import type { Pool } from "../src/db/pool.js";
import { purgeDeletedMemories } from "../src/db/sql/memories.js";
import { purgeEvents } from "../src/db/sql/events.js";
import { Channel, type SignalBus } from "../src/jobs/bus.js";
import { Doorbell } from "../src/jobs/doorbell.js";
import { PollBackoff } from "../src/jobs/poll-backoff.js";
import { yieldToChats } from "../src/jobs/yield-to-chats.js";
import { chatsUnderWay } from "../src/db/sql/turns.js";
import { MAINTENANCE_QUEUE, MAINTENANCE_SIGNAL, MaintenanceJobSchema, MEMORY_QUEUE, RememberTurnJobSchema } from "../src/jobs/queue.js";
import { lastConsolidation } from "../src/db/sql/consolidation.js";
import { pruneJournal, refreshDreamStatistics } from "../src/db/sql/dreams.js";
import { tidyTextIndex } from "../src/db/sql/memory-terms.js";
import { consolidate } from "../src/memory/consolidate.js";
import { type DreamSettings, readDreamSettings } from "../src/dreams/settings.js";
import type { Logger } from "../src/log.js";
import type { MoodKeeper } from "../src/mood/mood-keeper.js";
import type { Memory } from "../src/memory/memory.js";
import { queueReembeddingIfNeeded, runReembedding } from "../src/memory/reembed.js";

/** The event log is a live feed with a week to resume in; the history itself is in the tables it reports on. */
const EVENTS_KEPT_SECONDS = 7 * 24 * 3600;

/** Memory jobs taken at a time (see loop). */
const MEMORY_BATCH = 8;

export interface MemoryWorkerDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  memory: Memory;
  mood: MoodKeeper;
  log: Logger;
  pollMs: number;
  purgeAfterSeconds: number;
  /** How long a turn's memory may wait for the chats under way to end (jobs/yield-to-chats.ts); 0: never. */
  memoryDeferSeconds: number;
  /** How long no chat must have been under way before a turn's memory is formed (jobs/yield-to-chats.ts). */
  memoryQuietMs: number;
  /** Memories re-embedded per batch. Default 64. */
  reembedBatch?: number;
  /** The dream settings' defaults (consolidation on the schedule). */
  dreamDefaults: DreamSettings;
  /** Journal entries that did not become a memory are deleted this many days after they ended (db/sql/dreams.ts); 0: never. */
  journalKeepDays?: number;
  /**
   * The inference worker beside it in this process, named on its consolidations: if the process
   * dies during one, that worker's stale heartbeat lets a live one close the entry.
   */
  workerId?: string;
}

/** pg-boss's cron puts a tick on the maintenance queue this often. */
export const MAINTENANCE_CRON = "* * * * *";

/** How often the maintenance tick vacuums and analyses the full-text index (db/sql/memory-terms.ts). */
const TIDY_EVERY_MS = 60 * 60_000;

export class MemoryWorker {
  private readonly doorbell = new Doorbell();
  private readonly maintenanceDoorbell = new Doorbell();
  private readonly stopping = new AbortController();
  private loops: Promise<void>[] = [];
  private unsubscribe: (() => void) | undefined;
  private purgeTimer: NodeJS.Timeout | undefined;
  private tidiedAt = 0;

  constructor(private readonly deps: MemoryWorkerDeps) {}

  async start(): Promise<void> {
    // Each loop wakes for its own work: ringing both cost an empty maintenance fetch per chat.
    this.unsubscribe = this.deps.bus.subscribe(Channel.memory, (payload) =>
      (payload === MAINTENANCE_SIGNAL ? this.maintenanceDoorbell : this.doorbell).ring(),
    );
    await queueReembeddingIfNeeded({ ...this.deps, embedder: this.deps.memory.embedder });
    // Memories from before the full-text index (migrations/000007_bm25.sql), or written behind
    // Psyche's back (SQL, a restore), join it at start: looking for them scans every memory,
    // too much for each minute's tick.
    const indexed = await this.deps.memory.indexPending();
    if (indexed) {
      this.deps.log.info({ memories: indexed }, "added stored memories to the full-text index");
      await tidyTextIndex(this.deps.pool);
    }
    // Idempotent: pg-boss keeps one schedule per queue; the supervising process fires it.
    await this.deps.boss.schedule(MAINTENANCE_QUEUE, MAINTENANCE_CRON, { kind: "tick" }, { priority: 1, retryLimit: 0 });
    this.loops = [
      this.loop(
        MEMORY_QUEUE,
        this.doorbell,
        (job) => this.remember(job),
        MEMORY_BATCH,
        (jobs) => this.yieldToChats(jobs),
      ),
      // One at a time: a maintenance job can run for minutes (a re-embedding).
      this.loop(MAINTENANCE_QUEUE, this.maintenanceDoorbell, (job) => this.maintain(job), 1),
    ];
    const every = Math.min(60_000, Math.max(1000, this.deps.purgeAfterSeconds * 1000));
    this.purgeTimer = setInterval(() => void this.purge(), every);
    this.purgeTimer.unref();
  }

  /**
   * Takes up to `batch` jobs at a time and completes those that succeeded together: after a
   * burst of chats, one fetch and one completion for several turns' memories instead of two
   * statements each, on the backend the next turns wait for. A job handled but not completed
   * (the process died mid-batch) runs again after its expiry, which remembering a turn allows:
   * it stores a turn's memory once (memory/turn-memory.ts). `before` runs before each job with
   * the jobs left, so it can hold them.
   */
  private async loop(
    queue: string,
    doorbell: Doorbell,
    handle: (job: PgBoss.Job<unknown>) => Promise<void>,
    batch: number,
    before?: (jobs: PgBoss.JobWithMetadata<unknown>[]) => Promise<void>,
  ): Promise<void> {
    const signal = this.stopping.signal;
    // Between fetches that found nothing (jobs/poll-backoff.ts): queueing a job rings the doorbell.
    const backoff = new PollBackoff({ pollMs: this.deps.pollMs * 4, complete: () => this.deps.bus.complete });
    const idle = () => backoff.wait(doorbell, signal);
    while (!signal.aborted) {
      try {
        const jobs = await this.deps.boss.fetch<unknown>(queue, { batchSize: batch, priority: true, includeMetadata: true });
        if (!jobs.length) {
          await idle();
          continue;
        }
        backoff.reset();
        const done: string[] = [];
        try {
          for (const [i, job] of jobs.entries()) {
            // Before each job, not only the batch's first: a chat that comes while a batch is
            // formed waits for the memory in hand, not for the rest of the batch (in back-to-back
            // bursts of chats, the last burst's memories took the cores from the next burst).
            if (!signal.aborted) await before?.(jobs.slice(i));
            // Shutting down: leave the rest to a retry in the next process.
            if (signal.aborted) {
              await this.deps.boss.fail(queue, job.id, { error: "worker stopped" }).catch(() => undefined);
              continue;
            }
            try {
              await handle(job);
              done.push(job.id);
            } catch (err) {
              const error = signal.aborted ? "worker stopped" : (err as Error).message;
              if (!signal.aborted) this.deps.log.error({ err, queue, jobId: job.id }, "memory job failed; pg-boss retries it");
              await this.deps.boss.fail(queue, job.id, { error }).catch(() => undefined);
            }
          }
        } finally {
          if (done.length) await this.deps.boss.complete(queue, done);
        }
        // Fewer than asked: the queue was empty then, and a job queued since rang the doorbell.
        if (jobs.length < batch) await idle();
      } catch (err) {
        this.deps.log.error({ err, queue }, "memory loop error");
        await doorbell.wait(this.deps.pollMs * 4, signal);
      }
    }
  }

  /**
   * Holds what is left of a batch of turns' memories while chats are under way or have just
   * ended, up to memoryDeferSeconds from the oldest one's queueing. A turn's memory job is
   * queued as the turn ends, so the newest job's queueing is the last chat's end it knows.
   */
  private async yieldToChats(jobs: PgBoss.JobWithMetadata<unknown>[]): Promise<void> {
    const queued = jobs.map((j) => new Date(j.createdOn).getTime());
    await yieldToChats(
      {
        busy: () => chatsUnderWay(this.deps.pool),
        doorbell: this.doorbell,
        // A chat's end in this process rings at once; the poll is for one in another process.
        // At --poll-ms (250) it asked four times a second for as long as a chat streamed.
        pollMs: this.deps.pollMs * 4,
        quietMs: this.deps.memoryQuietMs,
      },
      { since: new Date(Math.min(...queued)), deferMs: this.deps.memoryDeferSeconds * 1000, lastChatEnded: new Date(Math.max(...queued)) },
      this.stopping.signal,
    );
  }

  private async remember(job: PgBoss.Job<unknown>): Promise<void> {
    // The rule for what a turn leaves in memory is memory/turn-memory.ts's.
    await rememberTurn(this.deps, RememberTurnJobSchema.parse(job.data).turnId, this.stopping.signal);
  }

  private async maintain(job: PgBoss.Job<unknown>): Promise<void> {
    const parsed = MaintenanceJobSchema.parse(job.data);
    const signal = this.stopping.signal;
    switch (parsed.kind) {
      case "reembed": {
        const outcome = await runReembedding(
          { ...this.deps, embedder: this.deps.memory.embedder, batchSize: this.deps.reembedBatch ?? 64 },
          parsed,
          signal,
        );
        if (outcome === "stopped") throw new Error("re-embedding stopped by shutdown");
        return;
      }
      case "consolidate": {
        const { settings } = await readDreamSettings(this.deps.pool, this.deps.dreamDefaults);
        await consolidate(this.deps, {
          similarity: parsed.similarity ?? settings.consolidation_similarity,
          everything: true,
          jobId: job.id,
          signal,
          workerId: this.deps.workerId,
        });
        return;
      }
      case "tick": {
        await this.deps.mood.decay();
        if (Date.now() - this.tidiedAt > TIDY_EVERY_MS) {
          this.tidiedAt = Date.now();
          await tidyTextIndex(this.deps.pool);
          const keep = this.deps.journalKeepDays ?? 0;
          const pruned = keep > 0 ? await pruneJournal(this.deps.pool, keep) : 0;
          if (pruned)
            this.deps.log.info({ entries: pruned, keepDays: keep }, "deleted old dream journal entries that did not become memories");
          await refreshDreamStatistics(this.deps.pool);
        }
        const { settings } = await readDreamSettings(this.deps.pool, this.deps.dreamDefaults);
        if (!settings.consolidation) return;
        const last = await lastConsolidation(this.deps.pool);
        if (last && Date.now() - last.getTime() < settings.consolidation_interval_minutes * 60_000) return;
        await consolidate(this.deps, {
          similarity: settings.consolidation_similarity,
          everything: false,
          jobId: job.id,
          signal,
          workerId: this.deps.workerId,
        });
        return;
      }
    }
  }

  private async purge(): Promise<void> {
    try {
      const n = await purgeDeletedMemories(this.deps.pool, this.deps.purgeAfterSeconds);
      if (n > 0) this.deps.log.info({ purged: n }, "purged deleted memories");
      await purgeEvents(this.deps.pool, EVENTS_KEPT_SECONDS);
    } catch (err) {
      this.deps.log.warn({ err }, "purging deleted memories or old events failed");
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.doorbell.ring();
    this.maintenanceDoorbell.ring();
    this.unsubscribe?.();
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    await Promise.all(this.loops);
  }
}

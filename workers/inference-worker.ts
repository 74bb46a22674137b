// The inference worker: the one process that owns the model. It takes jobs by priority the
// moment it is signalled (polling only as the fallback): chats up to twice the engine's slots at
// once (those beyond the slots wait in the engine's line, their bookkeeping done),
// a reverie only alone (a chat that comes wakes it; one that runs keeps it queued). A chat
// signalled while the queue was otherwise empty is taken by its turn's id, not fetched.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { hostname } from "node:os";
import type PgBoss from "pg-boss";
import type { Logger } from "../src/log.js";
import type { Pool } from "../src/db/pool.js";
import { heartbeat, markWorkerStopped, registerWorker } from "../src/db/sql/workers.js";
import { Channel, type SignalBus } from "../src/jobs/bus.js";
import { Doorbell } from "../src/jobs/doorbell.js";
import { PollBackoff } from "../src/jobs/poll-backoff.js";
import { INFERENCE_QUEUE, InferenceJobSchema } from "../src/jobs/queue.js";
import { closeAbandonedReveries, reclaimOrphanedTurns, resumeStrandedTurns } from "../src/jobs/reclaim.js";
import { HandOff, runTurn } from "../src/conversation/run-turn.js";
import type { InferenceEngine } from "../src/inference/engine.js";
import type { Recall } from "../src/memory/recall.js";
import type { Memory } from "../src/memory/memory.js";
import type { MoodKeeper } from "../src/mood/mood-keeper.js";
import { runReverieJob } from "../src/dreams/reverie-job.js";
import { putBack } from "../src/db/sql/pgboss-jobs.js";
import { type TakenTurn, takeQueuedTurn } from "../src/db/sql/turns.js";
import type { ServerTools } from "../src/memory/memory-tools.js";

const isChatJob = (job: PgBoss.Job<unknown>) => InferenceJobSchema.safeParse(job.data).data?.kind === "chat";

/** A chat's signal carries its turn's id (conversation/start-turn.ts); a reverie's, a word. */
const signalledTurn = (payload: string) => z.uuid().safeParse(payload).success;

export interface InferenceWorkerDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  engine: InferenceEngine;
  log: Logger;
  persona: string;
  /** Mood and memories for each turn's prompt. */
  recall?: Recall | undefined;
  /** A dream's time budget (ms). Default 120 s. */
  dreamMaxMs?: number | undefined;
  /** For dreams: significant ones become memories, and they move the mood. */
  memory?: Memory | undefined;
  mood?: MoodKeeper | undefined;
  /** Psyche's own tools, offered in every turn. */
  serverTools?: ServerTools | undefined;
  serverToolIterations?: number | undefined;
  /** Fallback polling interval (ms). */
  pollMs: number;
  /** The least time between two writes of one stream's text (ms). Default DEFAULT_FLUSH_MS (conversation/run-turn.ts). */
  flushMs?: number | undefined;
  /** Heartbeat interval (ms); a worker silent for 5 of them is presumed dead. */
  heartbeatMs: number;
}

export class InferenceWorker {
  readonly id = randomUUID();
  private readonly doorbell = new Doorbell();
  /** The wait after a fetch that found fewer jobs than free slots (jobs/poll-backoff.ts). */
  private readonly idle: PollBackoff;
  private readonly host = hostname();
  private stopping = false;
  private loop: Promise<void> | undefined;
  /** The jobs in progress: their controllers (aborted with a HandOff on a forced stop). */
  private readonly current = new Map<string, AbortController>();
  /** Chats in progress, each a promise settled when it ends. */
  private readonly chats = new Set<Promise<void>>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Dreams' scoring and memory, still running after the worker moved on. */
  private readonly afterDreams = new Set<Promise<void>>();
  /** Jobs finished since start, by outcome; for /metrics and tests. */
  readonly outcomes = new Map<string, number>();
  /** A reverie went back to the queue for the chats running: their ends ring the loop. */
  private reverieWaits = false;
  /** Turns whose generation lost the database, to resume once it is back. */
  private readonly stranded = new Set<string>();
  /**
   * Turns signalled since the last fetch found the queue empty. While only such signals came,
   * they name everything that waits, and each is taken with its claim in one statement
   * (db/sql/turns.ts, takeQueuedTurn) instead of pg-boss's fetch and then the claim: on the
   * embedded database the fetch was 5-9 ms of a chat's first token.
   */
  private signalled: string[] = [];
  /** Something may wait that no chat's signal named (a reverie, a retry, a freed slot's queue): the next look fetches. */
  private mustFetch = true;

  constructor(private readonly deps: InferenceWorkerDeps) {
    this.idle = new PollBackoff({ pollMs: deps.pollMs, complete: () => deps.bus.complete });
  }

  async start(): Promise<void> {
    await registerWorker(this.deps.pool, {
      id: this.id,
      host: this.host,
      pid: process.pid,
      model: this.deps.engine.modelName,
      contextSize: this.deps.engine.contextSize,
    });
    this.unsubscribe = this.deps.bus.subscribe(Channel.jobs, (payload) => {
      if (!signalledTurn(payload)) return this.look();
      this.signalled.push(payload);
      this.doorbell.ring();
    });
    await this.reclaim();
    this.heartbeatTimer = setInterval(() => void this.tick(), this.deps.heartbeatMs);
    this.loop = this.run();
    this.deps.log.info({ workerId: this.id, model: this.deps.engine.modelName }, "inference worker started");
  }

  private async tick(): Promise<void> {
    try {
      await heartbeat(this.deps.pool, this.id);
      // The database answers again: turns it interrupted continue.
      for (const id of await resumeStrandedTurns(this.reclaimDeps(), [...this.stranded])) this.stranded.delete(id);
      await this.reclaim();
    } catch (err) {
      this.deps.log.warn({ err }, "heartbeat failed");
    }
  }

  private reclaimDeps() {
    return { ...this.deps, workerId: this.id, host: this.host, staleMs: this.deps.heartbeatMs * 5 };
  }

  private async reclaim(): Promise<void> {
    await reclaimOrphanedTurns(this.reclaimDeps());
    await closeAbandonedReveries(this.reclaimDeps());
  }

  /** Chats this worker is generating now. */
  get generating(): number {
    return this.chats.size;
  }

  /** Chats the engine generates at once. */
  private get slots(): number {
    return Math.max(1, this.deps.engine.parallel ?? 1);
  }

  /**
   * Chats taken at once: twice the slots where the engine lines up the chats beyond them
   * (InferenceEngine.waitsForSlot). A turn holds its slot only while it generates; claiming it,
   * recalling its memories and writing its end are done beside the others' generation, not in a
   * slot left idle meanwhile: a short chat spent a quarter of its time there (40 short chats at
   * once, 4 slots, on PostgreSQL).
   */
  private get takes(): number {
    return this.deps.engine.waitsForSlot ? this.slots * 2 : this.slots;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        if (this.chats.size >= this.takes) {
          // As many taken as may be: the next job waits in the queue (where a reverie sees it) until one ends.
          await this.doorbell.wait(this.deps.pollMs);
          continue;
        }
        // As many as there are free slots, in priority order (chats before dreams). Fewer than
        // asked means the queue was empty then: wait for the doorbell (a job queued since rang
        // it) rather than ask again for nothing.
        const free = this.takes - this.chats.size;
        if (!this.mustFetch && this.signalled.length > 0 && this.signalled.length <= free) {
          await this.takeSignalled();
          if (!this.mustFetch && !(await this.idle.wait(this.doorbell))) this.mustFetch = true;
          continue;
        }
        this.mustFetch = false;
        this.signalled = [];
        this.reverieWaits = false;
        const jobs = await this.deps.boss.fetch<unknown>(INFERENCE_QUEUE, { batchSize: free, priority: true });
        // A reverie runs to its end before the loop goes on, and only when no chat runs: one
        // fetched after chats, or beside the reverie it runs, goes back to the queue first, so
        // it does not sit taken meanwhile.
        const reverieFirst = jobs.length > 0 && !isChatJob(jobs[0]!);
        const taken = reverieFirst ? jobs.slice(0, 1) : jobs.filter(isChatJob);
        for (const job of jobs) if (!taken.includes(job)) await putBack(this.deps.pool, INFERENCE_QUEUE, job.id);
        if (taken.length < jobs.length) this.look();
        for (const [i, job] of taken.entries()) {
          await this.handle(job);
          if (this.stopping && i < taken.length - 1) {
            for (const rest of taken.slice(i + 1)) await putBack(this.deps.pool, INFERENCE_QUEUE, rest.id);
            break;
          }
        }
        // A job queued since the fetch rang the doorbell; the wait is a safety net.
        if (jobs.length >= free) this.mustFetch = true;
        else if (!(await this.idle.wait(this.doorbell))) this.mustFetch = true;
      } catch (err) {
        // The loop never dies: log and go on (pg-boss worker.ts does the same).
        this.deps.log.error({ err }, "inference loop error");
        this.mustFetch = true;
        await this.doorbell.wait(this.deps.pollMs);
      }
    }
    await Promise.all(this.chats);
  }

  /** Rings the loop for something only a fetch finds. */
  private look(): void {
    this.mustFetch = true;
    this.doorbell.ring();
  }

  /** Takes the signalled turns by their ids, in the order they came; one no longer waiting is skipped. */
  private async takeSignalled(): Promise<void> {
    const ids = this.signalled;
    this.signalled = [];
    for (const id of ids) {
      if (this.stopping) return;
      const taken = await takeQueuedTurn(this.deps.pool, id, INFERENCE_QUEUE, this.id);
      if (taken) this.startChat(taken.jobId, id, taken);
    }
  }

  /** Starts a chat beside the others, or runs a reverie to its end (or its wake) before the loop goes on. */
  private async handle(job: PgBoss.Job<unknown>): Promise<void> {
    const parsed = InferenceJobSchema.safeParse(job.data);
    if (!parsed.success) {
      this.deps.log.error({ jobId: job.id, issues: parsed.error.issues }, "malformed job; failing it");
      await this.deps.boss.fail(INFERENCE_QUEUE, job.id, { error: "malformed job data" });
      return;
    }
    if (parsed.data.kind === "chat") {
      this.startChat(job.id, parsed.data.turnId);
      return;
    }
    if (this.chats.size > 0) {
      // A reverie takes the model only when no chat runs: back to the queue until they end
      // (each end rings the doorbell).
      this.reverieWaits = true;
      this.mustFetch = true;
      await putBack(this.deps.pool, INFERENCE_QUEUE, job.id);
      await this.doorbell.wait(this.deps.pollMs);
      return;
    }
    // The reverie's whole lifecycle is dreams/reverie-job.ts's; the loop only hands it on.
    const controller = new AbortController();
    this.current.set(job.id, controller);
    try {
      const outcome = await runReverieJob({ ...this.deps, workerId: this.id }, job.id, parsed.data, controller, {
        outlives: (work) => this.track(work),
        ended: (outcome) => this.count(outcome),
      });
      if (outcome === "put-back") this.look();
    } finally {
      this.current.delete(job.id);
    }
  }

  /** Starts a chat beside the others; `taken` where its job was taken with the turn's claim. */
  private startChat(jobId: string, turnId: string, taken?: TakenTurn): void {
    const chat = this.chat(jobId, turnId, taken).finally(() => {
      const wasFull = this.chats.size >= this.takes;
      this.chats.delete(chat);
      // The loop waits on the doorbell for a free slot, or for the chats to end before a
      // reverie. Otherwise a chat's end leaves nothing new to fetch (a job queued meanwhile
      // rang itself), and its ring cost an empty fetch beside the next request, which a
      // coding agent sends right after the reply.
      if (wasFull || this.reverieWaits) this.look();
    });
    this.chats.add(chat);
  }

  private async chat(jobId: string, turnId: string, taken?: TakenTurn): Promise<void> {
    const controller = new AbortController();
    this.current.set(jobId, controller);
    try {
      const deps = { ...this.deps, workerId: this.id, streams: () => Math.min(this.chats.size, this.slots) };
      const outcome = await runTurn(deps, turnId, jobId, controller.signal, taken);
      this.count(outcome);
      if (outcome === "handed-off") {
        // Leave the job and turn as they are: the next worker reclaims the turn.
        return;
      }
      if (outcome === "stranded") {
        // The database went away under it: resumed by the heartbeat once it is back.
        this.stranded.add(turnId);
        return;
      }
      // A turn that finished completed its job in the same statement (db/sql/turns.ts, finishTurn).
      if (outcome !== "done" && outcome !== "cancelled") await this.deps.boss.complete(INFERENCE_QUEUE, jobId);
    } catch (err) {
      this.deps.log.error({ err, jobId }, "inference loop error");
    } finally {
      this.current.delete(jobId);
    }
  }

  private count(outcome: string): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
  }

  /** Work that outlives its job's turn in the loop (a reverie's scoring, an abandoned reverie): waited for on stop. */
  private track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.afterDreams.add(settled);
    void settled.finally(() => this.afterDreams.delete(settled));
  }

  /**
   * Stops taking jobs and waits up to `graceMs` for the one in progress; past that, hands it
   * on (it stays running under this worker's id, which is marked stopped, so the next worker
   * reclaims it at once and continues from what was streamed).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.doorbell.ring();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.unsubscribe?.();
    const timer = setTimeout(() => {
      for (const controller of this.current.values()) controller.abort(new HandOff("worker shutting down"));
    }, graceMs);
    await this.loop;
    clearTimeout(timer);
    await Promise.allSettled(this.afterDreams);
    await markWorkerStopped(this.deps.pool, this.id).catch(() => undefined);
    this.deps.log.info({ workerId: this.id }, "inference worker stopped");
  }
}

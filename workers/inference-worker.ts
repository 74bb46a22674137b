// The inference worker: the one process that owns the model. Its loop fetches and hands over,
// as pg-boss's worker.ts does: it asks the scheduler (inference/scheduler.ts) how many jobs it may
// take, takes them the moment it is signalled (polling only as the fallback), and hands them to
// the scheduler, which decides what runs, what waits and what goes back to the queue. A chat
// signalled while the queue was otherwise empty is taken by its turn's id, not fetched; one the
// web role of this process stores while the worker has room is handed over, stored claimed
// (reserve, src/jobs/hand-off.ts).
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
import { INFERENCE_QUEUE, type InferenceJob, InferenceJobSchema } from "../src/jobs/queue.js";
import { closeAbandonedReveries, reclaimOrphanedTurns, resumeStrandedTurns } from "../src/jobs/reclaim.js";
import { EventBatch } from "../src/conversation/event-batch.js";
import { HandOff, runTurn } from "../src/conversation/run-turn.js";
import type { InferenceEngine } from "../src/inference/engine.js";
import { ModelScheduler, type ScheduledJob, WAKE_DEADLINE_MS } from "../src/inference/scheduler.js";
import type { Recall } from "../src/memory/recall.js";
import type { Memory } from "../src/memory/memory.js";
import type { MoodKeeper } from "../src/mood/mood-keeper.js";
import { runReverieJob } from "../src/dreams/reverie-job.js";
import { putBack } from "../src/db/sql/pgboss-jobs.js";
import { type TakenTurn, takeQueuedTurn } from "../src/db/sql/turns.js";
import type { ServerTools } from "../src/memory/memory-tools.js";
import type { TurnReservation, TurnTaker } from "../src/jobs/hand-off.js";

/** A chat's signal carries its turn's id (conversation/open-turn.ts); a reverie's, a word. */
const signalledTurn = (payload: string) => z.uuid().safeParse(payload).success;

/** A job as the worker hands it over: its pg-boss id, its payload, and the claim where it was taken with one. */
interface WorkerJob extends ScheduledJob {
  data: InferenceJob;
  /** Taken with its turn claimed; a handed turn's `stored` settles with its store (jobs/hand-off.ts). */
  taken?: (TakenTurn & { stored?: Promise<void> }) | undefined;
}

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

export class InferenceWorker implements TurnTaker {
  readonly id = randomUUID();
  private readonly doorbell = new Doorbell();
  /** The wait after a fetch that found fewer jobs than there was room for (jobs/poll-backoff.ts). */
  private readonly idle: PollBackoff;
  private readonly host = hostname();
  /** Its turns' event writes of one moment, in one statement (conversation/event-batch.ts). */
  private readonly events: EventBatch;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Jobs finished since start, by outcome; for /metrics and tests. */
  readonly outcomes = new Map<string, number>();
  /** Turns whose generation lost the database, to resume once it is back. */
  private readonly stranded = new Set<string>();
  /**
   * Turns signalled since the last fetch found the queue empty. While only such signals came,
   * they name everything that waits, and each is taken with its claim in one statement
   * (db/sql/turns.ts, takeQueuedTurn) instead of pg-boss's fetch and then the claim: on the
   * first token's path (docs/benchmarks.md, "A turn's way in").
   */
  private signalled: string[] = [];
  /** Something may wait that no chat's signal named (a reverie, a retry, a job beyond those taken): the next look fetches. */
  private mustFetch = true;
  /** The model's time: who runs, where, and what goes back to the queue. */
  readonly scheduler: ModelScheduler<WorkerJob>;
  /** Turns handed to this worker since it started (reserve); for tests. */
  handed = 0;
  /** Room held for turns the web role of this process is storing claimed for this worker (reserve). */
  private reserved = 0;
  /** Rung when the last reservation ends: the loop takes nothing while one is open. */
  private readonly reservations = new Doorbell();
  /** A fetch or a take is under way: its jobs are not admitted yet, so no room is reserved meanwhile. */
  private taking = false;

  constructor(private readonly deps: InferenceWorkerDeps) {
    this.idle = new PollBackoff({ pollMs: deps.pollMs, complete: () => deps.bus.complete });
    this.events = new EventBatch(deps.pool);
    this.scheduler = new ModelScheduler<WorkerJob>(deps.engine, {
      runChat: (job, signal) => this.chat(job, signal),
      runReverie: (job, controller) => this.reverie(job, controller),
      // Its end is counted when it comes (reverie()); the scheduler waits for it on stop.
      abandoned: (job) => {
        deps.log.warn(
          { jobId: job.id, kind: job.data.kind },
          `the reverie did not stop within ${WAKE_DEADLINE_MS} ms of being told to: abandoned, the chats go first`,
        );
        this.count(`${job.data.kind}-abandoned`);
      },
      // The queue's operation; when to use it is the scheduler's to decide.
      returnToQueue: (job) => putBack(deps.pool, INFERENCE_QUEUE, job.id),
      look: () => this.look(),
    });
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

  /**
   * Room for one chat the web role of this process stores claimed for this worker and hands over
   * (jobs/hand-off.ts), or undefined: when the scheduler has no room, a fetch or take is
   * under way, or something may wait in the queue that came first (a signal not taken yet, or
   * anything only a fetch finds). While a reservation is open the loop takes nothing, so a
   * reverie is never admitted beside the chat it would not know of.
   */
  reserve(): TurnReservation | undefined {
    if (this.stopping || this.taking || this.mustFetch || this.signalled.length > 0) return undefined;
    if (this.scheduler.room() - this.reserved <= 0) return undefined;
    this.reserved++;
    let open = true;
    const end = () => {
      if (!open) return false;
      open = false;
      if (--this.reserved === 0) this.reservations.ring();
      return true;
    };
    return {
      workerId: this.id,
      hand: ({ jobId, turn, stored }) => {
        if (!end()) return;
        this.handed++;
        const job: WorkerJob = { id: jobId, kind: "chat", data: { kind: "chat", turnId: turn.id }, taken: { jobId, turn, stored } };
        // Stopping: the turn stays running under this worker, which is marked stopped, so the next one reclaims it.
        if (!this.scheduler.admitHanded(job))
          this.deps.log.info({ turnId: turn.id }, "handed a turn while stopping; left for the next worker");
      },
      release: () => void end(),
    };
  }

  takingIn(): () => void {
    return this.deps.engine.takingIn?.() ?? (() => undefined);
  }

  /** Milliseconds since this worker last had a chat under way: 0 while it has one. */
  get sinceChatMs(): number {
    return this.scheduler.sinceChatMs;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        if (this.reserved > 0) {
          // Turns being stored claimed for this worker: they have the room first.
          await this.reservations.wait(this.deps.pollMs);
          continue;
        }
        const room = this.scheduler.room();
        if (room === 0) {
          // The scheduler takes nothing now: a chat's end or a reverie's rings when it may.
          await this.doorbell.wait(this.deps.pollMs);
          continue;
        }
        if (!this.mustFetch && this.signalled.length > 0 && this.signalled.length <= room) {
          await this.whileTaking(() => this.takeSignalled());
          if (!this.mustFetch && !(await this.idle.wait(this.doorbell))) this.mustFetch = true;
          continue;
        }
        this.mustFetch = false;
        this.signalled = [];
        const fetched = await this.whileTaking(async () => {
          const fetched = await this.deps.boss.fetch<unknown>(INFERENCE_QUEUE, { batchSize: room, priority: true });
          await this.scheduler.admit(await this.parsed(fetched));
          return fetched;
        });
        // Fewer than asked: the queue was empty then; a job queued since rang the doorbell, and
        // the wait is a safety net.
        if (fetched.length >= room) this.mustFetch = true;
        else if (!(await this.idle.wait(this.doorbell))) this.mustFetch = true;
      } catch (err) {
        // The loop never dies: log and go on (pg-boss worker.ts does the same).
        this.deps.log.error({ err }, "inference loop error");
        this.mustFetch = true;
        await this.doorbell.wait(this.deps.pollMs);
      }
    }
  }

  /** Runs a fetch or a take and its admission, with no room reserved meanwhile (reserve). */
  private async whileTaking<T>(take: () => Promise<T>): Promise<T> {
    this.taking = true;
    try {
      return await take();
    } finally {
      this.taking = false;
    }
  }

  /** The jobs whose payload is one of ours; a malformed one is failed here, with its issues logged. */
  private async parsed(jobs: PgBoss.Job<unknown>[]): Promise<WorkerJob[]> {
    const out: WorkerJob[] = [];
    for (const job of jobs) {
      const data = InferenceJobSchema.safeParse(job.data);
      if (data.success) out.push({ id: job.id, kind: data.data.kind === "chat" ? "chat" : "reverie", data: data.data });
      else {
        this.deps.log.error({ jobId: job.id, issues: data.error.issues }, "malformed job; failing it");
        await this.deps.boss.fail(INFERENCE_QUEUE, job.id, { error: "malformed job data" });
      }
    }
    return out;
  }

  /** Asks the loop to fetch: something waits that only a fetch finds. */
  private look(): void {
    this.mustFetch = true;
    this.doorbell.ring();
  }

  /** Takes the signalled turns by their ids, in the order they came; one no longer waiting is skipped. */
  private async takeSignalled(): Promise<void> {
    const ids = this.signalled;
    this.signalled = [];
    for (const turnId of ids) {
      if (this.stopping) return;
      const taken = await takeQueuedTurn(this.deps.pool, turnId, INFERENCE_QUEUE, this.id);
      if (taken) await this.scheduler.admit([{ id: taken.jobId, kind: "chat", data: { kind: "chat", turnId }, taken }]);
    }
  }

  /** A chat, from its claim to its end (conversation/run-turn.ts), and what its outcome leaves to the queue. */
  private async chat(job: WorkerJob, signal: AbortSignal): Promise<void> {
    if (job.data.kind !== "chat") return;
    const turnId = job.data.turnId;
    try {
      const deps = {
        ...this.deps,
        model: this.scheduler,
        workerId: this.id,
        streams: () => this.scheduler.streams,
        events: this.events,
        holdCore: () => this.takingIn(),
      };
      const outcome = await runTurn(deps, turnId, job.id, signal, job.taken);
      this.count(outcome);
      // Handed off: the job and turn stay as they are, for the next worker to reclaim. Never
      // stored: there is no job to complete.
      if (outcome === "handed-off" || outcome === "unstored") return;
      if (outcome === "stranded") {
        // The database went away under it: resumed by the heartbeat once it is back.
        this.stranded.add(turnId);
        return;
      }
      // A turn that finished completed its job in the same statement (db/sql/turns.ts, finishTurn).
      if (outcome !== "done" && outcome !== "cancelled") await this.deps.boss.complete(INFERENCE_QUEUE, job.id);
    } catch (err) {
      this.deps.log.error({ err, jobId: job.id }, "inference loop error");
    }
  }

  /** A reverie, its whole lifecycle dreams/reverie-job.ts's. */
  private async reverie(job: WorkerJob, controller: AbortController): Promise<string> {
    if (job.data.kind === "chat") return "failed";
    const outcome = await runReverieJob({ ...this.deps, model: this.scheduler, workerId: this.id }, job.id, job.data, controller, {
      outlives: (work) => this.scheduler.outlive(work),
    });
    this.count(outcome);
    return outcome;
  }

  private count(outcome: string): void {
    this.outcomes.set(outcome, (this.outcomes.get(outcome) ?? 0) + 1);
  }

  /**
   * Stops taking jobs and waits up to `graceMs` for those in progress; past that, hands them
   * on (each stays running under this worker's id, which is marked stopped, so the next worker
   * reclaims it at once and continues from what was streamed).
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.doorbell.ring();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.unsubscribe?.();
    // The scheduler's grace starts now, whatever the loop is waiting for (a reverie it handed over).
    const stopped = this.scheduler.stop(graceMs, () => new HandOff("worker shutting down"));
    await this.loop;
    await stopped;
    await markWorkerStopped(this.deps.pool, this.id).catch(() => undefined);
    this.deps.log.info({ workerId: this.id }, "inference worker stopped");
  }
}

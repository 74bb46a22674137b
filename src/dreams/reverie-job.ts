// A reverie job from the moment the scheduler admits it (inference/scheduler.ts) to its end: the
// one owner of a dream's lifecycle, as conversation/run-turn.ts is of a chat's. It checks
// do-not-disturb, puts the job back when a chat waits, watches for a wake (dreams/wake-watch.ts),
// keeps the time budget, runs the reverie (dreams/dream.ts: checkpoints, the journal, reflection
// afterwards), and completes or fails the job. How long a woken reverie may keep the model is the
// scheduler's to say (WAKE_DEADLINE_MS there).
import type PgBoss from "pg-boss";
import { doNotDisturbUntil } from "../db/sql/dream-settings.js";
import { putBack, waitingAbove } from "../db/sql/pgboss-jobs.js";
import type { SignalBus } from "../jobs/bus.js";
import { INFERENCE_QUEUE, Priority, type ReverieJob } from "../jobs/queue.js";
import { type DreamDeps, DreamTimeUp, runDream, ShareSpent } from "./dream.js";
import { reveriePriority } from "./queue-reverie.js";
import { WakeWatch } from "./wake-watch.js";

export interface ReverieJobDeps extends DreamDeps {
  boss: PgBoss;
  bus: SignalBus;
  /** Fallback polling interval of the wake watch (ms). */
  pollMs: number;
  /** A reverie's time budget when its job names none (ms). Default 120 s. */
  dreamMaxMs?: number | undefined;
}

/**
 * How a reverie job ended: `put-back` (a chat was waiting: the job is queued again),
 * `<kind>-done`, `<kind>-paused` (to be continued, dreams/dream.ts), `<kind>-interrupted`, or `failed`.
 */
export type ReverieOutcome = "put-back" | "failed" | `${ReverieJob["kind"]}-${"done" | "paused" | "interrupted"}`;

export interface ReverieJobHooks {
  /** Work that outlives the job (a reverie's scoring and memories): the worker waits for it on stop. */
  outlives(work: Promise<unknown>): void;
}

/**
 * Dreams (or thinks, or reflects) until done or woken: a chat's signal aborts `controller` at
 * the next token (the journal keeps what it had), and the worker then fetches the chat, which
 * outranks it. Under do-not-disturb the chat waits instead. A reverie never starts while a
 * chat waits: it goes back to the queue. Resolves when the reverie's model work has ended and
 * its job is settled; never rejects.
 */
export async function runReverieJob(
  deps: ReverieJobDeps,
  jobId: string,
  job: ReverieJob,
  controller: AbortController,
  hooks: ReverieJobHooks,
): Promise<ReverieOutcome> {
  const watch = new WakeWatch({
    pool: deps.pool,
    bus: deps.bus,
    controller,
    queue: INFERENCE_QUEUE,
    wakeAbove: Priority.chat - 1,
    pollMs: deps.pollMs,
  }).start();
  let timeUp: NodeJS.Timeout | undefined;
  // The time limit is the entry's, across its stretches; the budget's share (sliceSeconds) is
  // this job's. Whichever comes first stops it: the limit as done, the share as paused.
  const clock = (dreamtSeconds: number) => {
    const limitMs = Math.max(0, (job.maxSeconds ? job.maxSeconds * 1000 : (deps.dreamMaxMs ?? 120_000)) - dreamtSeconds * 1000);
    const shareMs = job.sliceSeconds === undefined ? Infinity : job.sliceSeconds * 1000;
    timeUp =
      shareMs < limitMs
        ? setTimeout(() => controller.abort(new ShareSpent()), shareMs)
        : setTimeout(() => controller.abort(new DreamTimeUp()), limitMs);
  };
  try {
    const dndUntil = await doNotDisturbUntil(deps.pool);
    watch.holdUntil(dndUntil);
    if (!dndUntil && (controller.signal.aborted || (await waitingAbove(deps.pool, INFERENCE_QUEUE, reveriePriority(job))))) {
      await putBack(deps.pool, INFERENCE_QUEUE, jobId);
      return "put-back";
    }
    const { status, afterwards } = await runDream(deps, jobId, job, controller.signal, clock);
    hooks.outlives(afterwards);
    await deps.boss.complete(INFERENCE_QUEUE, jobId);
    return `${job.kind}-${status}`;
  } catch (err) {
    deps.log.error({ err, jobId }, "reverie failed");
    await deps.boss.fail(INFERENCE_QUEUE, jobId, { error: (err as Error).message }).catch(() => undefined);
    return "failed";
  } finally {
    clearTimeout(timeUp);
    watch.stop();
  }
}

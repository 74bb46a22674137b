// A reverie job from the moment the inference worker takes it to its end: the one owner of a
// dream's lifecycle, as conversation/run-turn.ts is of a chat's. It checks do-not-disturb, puts
// the job back when a chat waits, watches for a wake (dreams/wake-watch.ts), keeps the time
// budget, runs the reverie (dreams/dream.ts: checkpoints, the journal, reflection afterwards),
// and completes or fails the job. A reverie whose model does not stop within WAKE_DEADLINE_MS
// of a wake is abandoned, so the chat goes first; its end is written whenever it comes.
import type PgBoss from "pg-boss";
import { doNotDisturbUntil } from "../db/sql/dream-settings.js";
import { putBack, waitingAbove } from "../db/sql/pgboss-jobs.js";
import type { SignalBus } from "../jobs/bus.js";
import { INFERENCE_QUEUE, Priority, type ReverieJob } from "../jobs/queue.js";
import { type DreamDeps, DreamTimeUp, runDream, Wake } from "./dream.js";
import { reveriePriority } from "./queue-reverie.js";
import { WakeWatch } from "./wake-watch.js";

/** After a wake, how long a reverie's generation has to stop before the worker goes on without it. */
export const WAKE_DEADLINE_MS = 500;

export interface ReverieJobDeps extends DreamDeps {
  boss: PgBoss;
  bus: SignalBus;
  /** Fallback polling interval of the wake watch (ms). */
  pollMs: number;
  /** A reverie's time budget when its job names none (ms). Default 120 s. */
  dreamMaxMs?: number | undefined;
}

/**
 * How a reverie job ended for the worker: `put-back` (a chat was waiting: the job is queued
 * again), `<kind>-done`, `<kind>-interrupted`, `<kind>-abandoned`, or `failed`.
 */
export type ReverieOutcome = "put-back" | "failed" | `${ReverieJob["kind"]}-${"done" | "interrupted" | "abandoned"}`;

export interface ReverieJobHooks {
  /** Work that outlives the job (a reverie's scoring, an abandoned reverie): the worker waits for it on stop. */
  outlives(work: Promise<unknown>): void;
  /** Each outcome as it happens (an abandoned reverie's `<kind>-done` comes later). */
  ended(outcome: ReverieOutcome): void;
}

/** Resolves "abandoned" `ms` after `signal` is aborted by a Wake; never otherwise. */
function wakeDeadline(signal: AbortSignal, ms: number): { passed: Promise<"abandoned">; clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const passed = new Promise<"abandoned">((resolve) => {
    onAbort = () => {
      if (signal.reason instanceof Wake) timer = setTimeout(() => resolve("abandoned"), ms);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return {
    passed,
    clear: () => {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * Dreams (or thinks, or reflects) until done or woken: a chat's signal aborts `controller` at
 * the next token (the journal keeps what it had), and the worker then fetches the chat, which
 * outranks it. Under do-not-disturb the chat waits instead. A reverie never starts while a
 * chat waits: it goes back to the queue. Resolves once the worker may take its next job.
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
  const timeUp = setTimeout(
    () => controller.abort(new DreamTimeUp()),
    job.maxSeconds ? job.maxSeconds * 1000 : (deps.dreamMaxMs ?? 120_000),
  );
  try {
    const dndUntil = await doNotDisturbUntil(deps.pool);
    watch.holdUntil(dndUntil);
    if (!dndUntil && (controller.signal.aborted || (await waitingAbove(deps.pool, INFERENCE_QUEUE, reveriePriority(job))))) {
      await putBack(deps.pool, INFERENCE_QUEUE, jobId);
      hooks.ended("put-back");
      return "put-back";
    }
    const run = runDream(deps, jobId, job, controller.signal).then(async ({ status, afterwards }) => {
      hooks.outlives(afterwards);
      hooks.ended(`${job.kind}-${status}`);
      await deps.boss.complete(INFERENCE_QUEUE, jobId);
      return `${job.kind}-${status}` as const;
    });
    const deadline = wakeDeadline(controller.signal, WAKE_DEADLINE_MS);
    try {
      const first = await Promise.race([run, deadline.passed]);
      if (first !== "abandoned") return first;
    } finally {
      deadline.clear();
    }
    // The model did not stop at its next token: the chat goes first (it has a sequence of its
    // own), and the reverie's end is written whenever it comes.
    deps.log.warn(
      { jobId, kind: job.kind },
      `the reverie did not stop within ${WAKE_DEADLINE_MS} ms of the wake: abandoned, the chat goes first`,
    );
    hooks.ended(`${job.kind}-abandoned`);
    hooks.outlives(
      run.catch(async (err: unknown) => {
        deps.log.error({ err, jobId }, "an abandoned reverie failed");
        await deps.boss.fail(INFERENCE_QUEUE, jobId, { error: (err as Error).message });
      }),
    );
    return `${job.kind}-abandoned`;
  } catch (err) {
    deps.log.error({ err, jobId }, "reverie failed");
    await deps.boss.fail(INFERENCE_QUEUE, jobId, { error: (err as Error).message }).catch(() => undefined);
    hooks.ended("failed");
    return "failed";
  } finally {
    clearTimeout(timeUp);
    watch.stop();
  }
}

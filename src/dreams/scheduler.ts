// Reverie by itself (docs/dreams.md), from the settings in force (dreams/settings.ts):
// - a reflection when the summed importance of new experience passes the threshold;
// - an idle thought, once per quiet spell, while a conversation is open (a request within
//   dream_delay_seconds) but quiet for idle_thought_delay_seconds;
// - a dream after dream_delay_seconds without a request and with no client present
//   (db/sql/clients.ts), and the cooldown after the last.
// - between chats (quiet for idle_thought_delay_seconds, no client present), a short dream, or
//   the continuation of one a chat woke (dreams/dream.ts).
// While someone is about (not asleep: a request within dream_delay_seconds, or a client present)
// reveries share the model within the budget: dream_budget of the last
// dream_budget_window_seconds, each job cut to the share left (its sliceSeconds). Asleep, a dream
// takes what it needs.
// Nothing starts within the wake lock of a request, under do-not-disturb, or while anything is
// queued for the worker. The check and the queueing are one transaction under a lock, so two
// inference processes never queue twice. A chat wakes any of them (workers/inference-worker.ts).
// Each tick also records the clients' leaving (the `client.left` event) once a minute is quiet.
// While this process generates a chat, or had one within the wake lock, a tick looks at nothing
// (SchedulerDeps.sinceChatMs).
import type PgBoss from "pg-boss";
import { inTransaction, type Pool } from "../db/pool.js";
import { experienceSinceReflection, type QuietMoment, quietMoment } from "../db/sql/dreams.js";
import { queueBusy } from "../db/sql/pgboss-jobs.js";
import { noteDeparture } from "../db/sql/events.js";
import type { SignalBus } from "../jobs/bus.js";
import { INFERENCE_QUEUE, type ReverieJob } from "../jobs/queue.js";
import type { Logger } from "../log.js";
import { queueReverie, buildReverie, signalReverie } from "./queue-reverie.js";
import { type DreamSettings, readDreamSettings } from "./settings.js";
import { AdvisoryLock, lockForTransaction } from "../db/sql/locks.js";

export interface SchedulerDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  log: Logger;
  /** The settings' defaults (the flags); the database's overrides win. */
  defaults: DreamSettings;
  /** How often to look (ms). */
  everyMs: number;
  /** A client silent this long is no longer present (db/sql/clients.ts). */
  presenceTtlSeconds: number;
  /**
   * Milliseconds since this process's worker last had a chat under way, 0 while it has one.
   * Nothing is due then (its job keeps the queue busy), nor within the wake lock of its end (the
   * turn's end is a request's for the quiet, db/sql/dreams.ts), so a tick asks the database
   * nothing: on the embedded database a tick is a transaction of six statements that holds the
   * one backend from its first to its last, and one begun as a burst of chats arrived held their
   * turns' stores back (docs/benchmarks.md, "Where four at once still wait").
   */
  sinceChatMs?: () => number;
}

export interface Moment extends QuietMoment {
  /** Anything queued or running for the worker. */
  busy: boolean;
  dnd: boolean;
}

/** Less of the budget than this left, nothing starts: a reverie needs a moment to read its prompt. */
export const MIN_SLICE_SECONDS = 2;

/** What is due now, if anything. */
export function due(s: DreamSettings, m: Moment, importance: number): ReverieJob | undefined {
  if (!s.enabled || m.busy || m.dnd) return undefined;
  if (m.quiet !== null && m.quiet < s.wake_lock_seconds) return undefined;
  // A client that says it is there (Hermes) holds dreams off however quiet it is; the delay
  // counts from its leaving, which is its last request (DELETE /v1/presence or a heartbeat).
  const asleep = m.present === 0 && (m.quiet === null || m.quiet >= s.dream_delay_seconds);
  const left = asleep || s.dream_budget >= 1 ? Infinity : s.dream_budget * s.dream_budget_window_seconds - m.budget_used;
  const within = (job: ReverieJob): ReverieJob | undefined =>
    left === Infinity ? job : left < MIN_SLICE_SECONDS ? undefined : { ...job, sliceSeconds: Math.floor(left) };
  const cooled = m.paused_dream || m.since_dream === null || m.since_dream >= s.dream_cooldown_seconds;
  if (s.reflection_threshold > 0 && importance >= s.reflection_threshold) {
    return within(buildReverie(s, { kind: "reflect" }));
  }
  const between = m.quiet !== null && m.quiet >= s.idle_thought_delay_seconds && !asleep;
  if (s.idle_thoughts && between && m.quiet! < s.dream_delay_seconds && !m.thought_since_request) {
    return within(buildReverie(s, { kind: "idle", conversationId: m.conversation_id }));
  }
  if (asleep && cooled) return buildReverie(s, { kind: "dream" });
  // Between chats, a share of the model's time for a dream (or the one a chat woke).
  if (between && m.present === 0 && cooled && s.dream_budget > 0) return within(buildReverie(s, { kind: "dream" }));
  return undefined;
}

export class DreamScheduler {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private readonly startedAt = new Date();
  /** The wake lock as last read: the flag's until the first look reads the database's. */
  private wakeLockMs: number;

  constructor(private readonly deps: SchedulerDeps) {
    this.wakeLockMs = deps.defaults.wake_lock_seconds * 1000;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.deps.everyMs);
    this.timer.unref();
  }

  /** Queues what is due, if anything; returns its job id. */
  async tick(): Promise<string | undefined> {
    if (this.busy || this.chatTooRecent()) return undefined;
    this.busy = true;
    try {
      const queued = await inTransaction(this.deps.pool, async (client) => {
        await lockForTransaction(client, AdvisoryLock.dreamSchedule);
        await noteDeparture(client);
        const { settings, dndUntil } = await readDreamSettings(client, this.deps.defaults);
        this.wakeLockMs = settings.wake_lock_seconds * 1000;
        if (!settings.enabled) return undefined;
        const busy = await queueBusy(client, INFERENCE_QUEUE);
        const moment = await quietMoment(client, this.startedAt, this.deps.presenceTtlSeconds, settings.dream_budget_window_seconds);
        const m: Moment = { ...moment, busy, dnd: dndUntil !== null };
        const experience = m.busy ? { importance: 0, scope: null } : await experienceSinceReflection(client);
        const next = due(settings, m, experience.importance);
        // A reflection turns over one scope: the one where most happened since the last.
        const job = next?.kind === "reflect" && experience.scope ? { ...next, scope: experience.scope } : next;
        if (!job) return undefined;
        const id = await queueReverie(this.deps, job, client);
        return id ? { id, kind: job.kind } : undefined;
      });
      if (!queued) return undefined;
      signalReverie(this.deps.bus);
      this.deps.log.info(
        { jobId: queued.id, kind: queued.kind },
        queued.kind === "dream" ? "quiet for a while: dreaming" : `quiet: ${queued.kind === "idle" ? "an idle thought" : "reflecting"}`,
      );
      return queued.id;
    } catch (err) {
      this.deps.log.warn({ err }, "the dream scheduler could not look");
      return undefined;
    } finally {
      this.busy = false;
    }
  }

  /**
   * A chat under way here, or one ended within the wake lock: nothing is due (the turn ended a
   * moment before the chat did, so the database may count a few milliseconds more quiet). A
   * wake lock lowered in the database meanwhile is read at the first look after the old one
   * has passed.
   */
  private chatTooRecent(): boolean {
    const since = this.deps.sinceChatMs?.();
    return since !== undefined && (since === 0 || since < this.wakeLockMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }
}

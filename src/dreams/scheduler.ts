// Dreaming by itself: after `delay` seconds without a request, and `cooldown` after the last
// dream, with nothing queued for the worker, one dream is queued at dream priority. The check
// and the queueing are one transaction under a lock, so two inference processes never queue
// two dreams. A chat wakes a dream (inference/worker.ts); the wake lock keeps a reconnecting
// client from meeting a fresh dream.
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import { inTransaction, type Pool } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { type DreamJob, INFERENCE_QUEUE, Priority } from "../jobs/queue.js";
import type { Logger } from "../log.js";
import { DREAM_SIGNAL } from "./dream.js";

export interface DreamSchedule {
  delaySeconds: number;
  cooldownSeconds: number;
  wakeLockSeconds: number;
  maxTokens: number;
}

export interface SchedulerDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  log: Logger;
  schedule: DreamSchedule;
  /** How often to look (ms). */
  everyMs: number;
}

const SCHEDULE_LOCK = 7_415_005;

export class DreamScheduler {
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly deps: SchedulerDeps) {}

  start(): void {
    if (this.deps.schedule.delaySeconds <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.deps.everyMs);
    this.timer.unref();
  }

  /** Queues a dream if it is time; returns its job id. */
  async tick(): Promise<string | undefined> {
    if (this.busy) return undefined;
    this.busy = true;
    try {
      const id = await inTransaction(this.deps.pool, async (client) => {
        await client.query("select pg_advisory_xact_lock($1)", [SCHEDULE_LOCK]);
        const s = this.deps.schedule;
        const quiet = Math.max(s.delaySeconds, s.wakeLockSeconds);
        const res = await client.query<{ due: boolean }>(
          `select
             coalesce((select max(greatest(created_at, coalesce(finished_at, created_at))) from turns), '-infinity') < now() - make_interval(secs => $1)
             and coalesce((select max(ended_at) from dream_journal), '-infinity') < now() - make_interval(secs => $2)
             and not exists (select 1 from pgboss.job where name = $3 and state in ('created', 'retry', 'active'))
             as due`,
          [quiet, s.cooldownSeconds, INFERENCE_QUEUE],
        );
        if (!res.rows[0]?.due) return undefined;
        const job: DreamJob = { kind: "dream", focus: null, maxTokens: s.maxTokens };
        const sent = await this.deps.boss.send(INFERENCE_QUEUE, job, {
          id: randomUUID(),
          priority: Priority.dream,
          retryLimit: 0,
          db: { executeSql: (text, values) => client.query(text, values) },
        });
        return sent ?? undefined;
      });
      if (id) {
        this.deps.bus.notify(Channel.jobs, DREAM_SIGNAL);
        this.deps.log.info({ jobId: id }, "quiet for a while: dreaming");
      }
      return id;
    } catch (err) {
      this.deps.log.warn({ err }, "the dream scheduler could not look");
      return undefined;
    } finally {
      this.busy = false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }
}

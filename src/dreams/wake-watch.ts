// While a reverie runs: a chat's signal wakes it at once, unless do-not-disturb holds, in
// which case the chat waits (seed 002) until the reverie ends or do-not-disturb does.
import type { Pool, Queryable } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { INFERENCE_QUEUE } from "../jobs/queue.js";
import { DND_SIGNAL, DREAM_SIGNAL, WAKE_SIGNAL, Wake } from "./dream.js";

/** Do-not-disturb's end, if it holds now. */
export async function doNotDisturbUntil(db: Queryable): Promise<Date | null> {
  const res = await db.query<{ until: Date | null }>("select case when dnd_until > now() then dnd_until end as until from dream_settings");
  return res.rows[0]?.until ?? null;
}

/** Whether a job that outranks `priority` waits (checked as a reverie starts: no dream while a chat waits). */
export async function outrankedBy(db: Queryable, priority: number): Promise<boolean> {
  const res = await db.query<{ waiting: boolean }>(
    "select exists (select 1 from pgboss.job where name = $1 and state in ('created', 'retry') and start_after < now() and priority > $2) as waiting",
    [INFERENCE_QUEUE, priority],
  );
  return res.rows[0]?.waiting ?? false;
}

/** Returns a fetched job to the queue untouched, to run after what outranks it. */
export async function putBack(db: Queryable, jobId: string): Promise<void> {
  await db.query("update pgboss.job set state = 'created', started_on = null where name = $1 and id = $2 and state = 'active'", [INFERENCE_QUEUE, jobId]);
}

export class WakeWatch {
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private wakePending = false;

  constructor(
    private readonly pool: Pool,
    private readonly bus: SignalBus,
    private readonly controller: AbortController,
  ) {}

  private dndUntil: Date | null = null;

  /** Do-not-disturb as read when the reverie starts. */
  holdUntil(until: Date | null): void {
    this.dndUntil = until;
  }

  start(): this {
    this.unsubscribe = this.bus.subscribe(Channel.jobs, (payload) => this.onSignal(payload));
    return this;
  }

  private onSignal(payload: string): void {
    if (payload === DREAM_SIGNAL || this.controller.signal.aborted) return;
    if (payload === DND_SIGNAL) {
      void doNotDisturbUntil(this.pool)
        .then((until) => {
          this.dndUntil = until;
          if (this.wakePending) this.deferWake();
        })
        .catch(() => undefined);
      return;
    }
    if (payload !== WAKE_SIGNAL && this.dndUntil && this.dndUntil.getTime() > Date.now()) {
      this.wakePending = true;
      this.deferWake();
      return;
    }
    this.controller.abort(new Wake());
  }

  /** A chat waits for do-not-disturb's end: wake then (at once if it has ended). */
  private deferWake(): void {
    if (this.timer) clearTimeout(this.timer);
    const ms = this.dndUntil ? this.dndUntil.getTime() - Date.now() : 0;
    if (ms <= 0) {
      if (!this.controller.signal.aborted) this.controller.abort(new Wake());
      return;
    }
    this.timer = setTimeout(() => this.controller.signal.aborted || this.controller.abort(new Wake()), ms);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.unsubscribe?.();
  }
}

// While a reverie runs: a chat wakes it at once, unless do-not-disturb holds, in which case the
// chat waits (the point of do-not-disturb, docs/dreams.md) until the reverie ends or
// do-not-disturb does. A signal makes waking prompt; a poll at --poll-ms makes it certain where
// no signal arrives (separate processes on the embedded database, PgBouncer): it looks for a
// job that outranks the reverie, a wake request, and do-not-disturb's changes.
import type { Pool } from "../db/pool.js";
import { doNotDisturbUntil, storedDreamSettings } from "../db/sql/dream-settings.js";
import { waitingAbove } from "../db/sql/pgboss-jobs.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { DND_SIGNAL, DREAM_SIGNAL, WAKE_SIGNAL, Wake } from "./dream.js";

export interface WakeWatchOptions {
  pool: Pool;
  bus: SignalBus;
  controller: AbortController;
  /** The queue the reverie came from; a job waiting there above `wakeAbove` (a chat) wakes it. */
  queue: string;
  wakeAbove: number;
  pollMs: number;
}

export class WakeWatch {
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private wakePending = false;
  private dndUntil: Date | null = null;
  /** The last wake request seen; undefined until the first poll has read it. */
  private lastWakeRequest: number | undefined;
  private polling = false;

  constructor(private readonly o: WakeWatchOptions) {}

  /** Do-not-disturb as read when the reverie starts. */
  holdUntil(until: Date | null): void {
    this.dndUntil = until;
  }

  start(): this {
    this.unsubscribe = this.o.bus.subscribe(Channel.jobs, (payload) => this.onSignal(payload));
    void this.poll();
    this.poller = setInterval(() => void this.poll(), this.o.pollMs);
    this.poller.unref();
    return this;
  }

  private get controller(): AbortController {
    return this.o.controller;
  }

  private onSignal(payload: string): void {
    if (payload === DREAM_SIGNAL || this.controller.signal.aborted) return;
    if (payload === DND_SIGNAL) {
      void doNotDisturbUntil(this.o.pool)
        .then((until) => this.dndChanged(until))
        .catch(() => undefined);
      return;
    }
    if (payload === WAKE_SIGNAL) this.controller.abort(new Wake());
    else this.chatWaits();
  }

  /** The facts behind the signals, read from the database. */
  private async poll(): Promise<void> {
    if (this.polling || this.controller.signal.aborted) return;
    this.polling = true;
    try {
      const [settings, outranked] = await Promise.all([
        storedDreamSettings(this.o.pool),
        waitingAbove(this.o.pool, this.o.queue, this.o.wakeAbove),
      ]);
      if (this.controller.signal.aborted) return;
      const wake = settings.wakeRequestedAt?.getTime() ?? 0;
      if (this.lastWakeRequest !== undefined && wake > this.lastWakeRequest) {
        this.controller.abort(new Wake());
        return;
      }
      this.lastWakeRequest = wake;
      this.dndChanged(settings.dndUntil);
      if (outranked) this.chatWaits();
    } catch {
      // A poll that fails is followed by the next one; the signal may still come.
    } finally {
      this.polling = false;
    }
  }

  private chatWaits(): void {
    if (this.controller.signal.aborted) return;
    if (this.dndUntil && this.dndUntil.getTime() > Date.now()) {
      this.wakePending = true;
      this.deferWake();
      return;
    }
    this.controller.abort(new Wake());
  }

  private dndChanged(until: Date | null): void {
    const changed = (until?.getTime() ?? null) !== (this.dndUntil?.getTime() ?? null);
    this.dndUntil = until;
    if (changed && this.wakePending) this.deferWake();
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
    if (this.poller) clearInterval(this.poller);
    this.unsubscribe?.();
  }
}

// While a reverie runs: a chat's signal wakes it at once, unless do-not-disturb holds, in
// which case the chat waits (the point of do-not-disturb, README: "Dreams") until the reverie ends or do-not-disturb does.
import type { Pool } from "../db/pool.js";
import { doNotDisturbUntil } from "../db/sql/dream-settings.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { DND_SIGNAL, DREAM_SIGNAL, WAKE_SIGNAL, Wake } from "./dream.js";

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

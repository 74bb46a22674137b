// How long a consumer waits between two polls that found nothing. Where every signal reaches
// this process (SignalBus.complete), a poll is only a safety net, so the wait grows after each
// empty one, up to `max` times pollMs; where only polling sees other processes' work, it stays
// pollMs. On the embedded database every poll is a statement run on the process's main thread,
// beside the model's threads (docs/decisions.md, "Polls back off where every signal arrives").
import type { Doorbell } from "./doorbell.js";

export interface PollBackoffOptions {
  pollMs: number;
  /** Whether every signal reaches this process now (SignalBus.complete). */
  complete: () => boolean;
  /** The longest wait, in pollMs. Default 8. */
  max?: number;
}

export class PollBackoff {
  private factor = 1;

  constructor(private readonly o: PollBackoffOptions) {}

  /** The wait before the next poll. */
  get ms(): number {
    return this.o.pollMs * (this.o.complete() ? this.factor : 1);
  }

  /** A poll found nothing (or a wait ran out unrung): the next wait is twice as long, up to the cap. */
  idle(): void {
    this.factor = Math.min(this.factor * 2, this.o.max ?? 8);
  }

  /** A poll found something, or a signal came: back to pollMs. */
  reset(): void {
    this.factor = 1;
  }

  /**
   * Waits for `doorbell` at most the current wait: running out lengthens the next; a ring ends
   * it and leaves the next as it is. The ring's work is fetched by the poll it wakes, and where
   * every signal arrives the polls between are a safety net (for a retry, which pg-boss makes
   * due without a signal): going back to pollMs at each chat's signal cost an empty fetch a
   * quarter of a second into the chat, often beside its first token. True when rung.
   */
  async wait(doorbell: Doorbell, signal?: AbortSignal): Promise<boolean> {
    const rung = await doorbell.wait(this.ms, signal);
    if (!rung) this.idle();
    return rung;
  }
}

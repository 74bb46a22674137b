// Follows a turn's events from the database: any web process can relay, resume or wait for
// any turn. Signals make it prompt; polling makes it correct without them.
import { eventsAfter, type TurnEvent } from "../db/sql/turn-events.js";
import type { Queryable } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { Doorbell } from "../jobs/doorbell.js";
import { PollBackoff } from "../jobs/poll-backoff.js";
import { decodeTurnSignal } from "../jobs/turn-signal.js";

export interface FollowDeps {
  pool: Queryable;
  bus: SignalBus;
  pollMs: number;
  /** Told the seconds from a new turn's follower to its first text (the metrics' time to first token). */
  firstToken?: ((seconds: number) => void) | undefined;
}

export interface FollowOptions {
  afterSeq: number;
  signal?: AbortSignal | undefined;
  /** The turn was just queued: it has no events yet, so wait for a signal before reading. */
  fresh?: boolean;
}

/**
 * How much longer than `pollMs` a follower may wait between reads while nothing happens, where
 * signals reach it (bus.complete): polling is then only a safety net, and a chat queued behind
 * others read the table for nothing (docs/decisions.md, "A follower's polls back off").
 */
const MAX_BACKOFF = 8;

/**
 * Subscribes to the turn's signals when constructed, so a follower made before the turn is
 * queued cannot miss its first signal. Close it if events() is never iterated.
 */
export class TurnFollower {
  private readonly doorbell = new Doorbell();
  /** Events carried by signals, by sequence number, not yet relayed. */
  private readonly carried = new Map<number, TurnEvent>();
  private readonly unsubscribe: () => void;
  private closed = false;
  private readonly createdAt = performance.now();

  constructor(
    private readonly deps: FollowDeps,
    readonly turnId: string,
  ) {
    this.unsubscribe = deps.bus.subscribe(Channel.turn, (payload) => {
      const signal = decodeTurnSignal(payload);
      if (signal?.turnId !== turnId) return;
      if (signal.event) this.carried.set(signal.event.seq, signal.event);
      this.doorbell.ring();
    });
  }

  /** Yields the turn's events after `afterSeq` until its closing event, or until `signal` aborts. */
  async *events(o: FollowOptions): AsyncGenerator<TurnEvent> {
    try {
      let seq = o.afterSeq;
      // Only a new turn's first text is a first token; a resumed stream's is not.
      let timing = o.fresh === true && this.deps.firstToken !== undefined;
      // Doubles after each read that found nothing, back to pollMs after one that found some.
      const backoff = new PollBackoff({ pollMs: this.deps.pollMs, complete: () => this.deps.bus.complete, max: MAX_BACKOFF });
      const wait = () => this.doorbell.wait(backoff.ms, o.signal);
      if (o.fresh) await wait();
      // After relaying a carried event, the next one comes with its own signal: wait for it
      // rather than read the table for what is not written yet (a read per event otherwise).
      let relayed = false;
      while (!o.signal?.aborted) {
        // The next event in order, when a signal carried it, needs no read; anything else
        // (a gap, no signal at all) is read from the table.
        const next = this.carried.get(seq + 1);
        for (const old of this.carried.keys()) if (old <= seq + 1) this.carried.delete(old);
        if (!next && relayed) {
          relayed = false;
          await wait();
          continue;
        }
        relayed = next !== undefined;
        const events = next ? [next] : await eventsAfter(this.deps.pool, this.turnId, seq);
        for (const event of events) {
          seq = event.seq;
          if (timing && (event.kind === "delta" || event.kind === "reasoning")) {
            timing = false;
            this.deps.firstToken?.((performance.now() - this.createdAt) / 1000);
          }
          yield event;
          if (event.kind === "done" || event.kind === "error") return;
        }
        if (events.length === 0) {
          backoff.idle();
          await wait();
        } else backoff.reset();
      }
    } finally {
      this.close();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
  }
}

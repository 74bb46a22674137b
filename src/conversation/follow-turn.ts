// Follows a turn's events from the database: any web process can relay, resume or wait for
// any turn. Signals make it prompt; polling makes it correct without them.
import { eventsAfter, type TurnEvent } from "../db/sql/turn-events.js";
import type { Queryable } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { Doorbell } from "../jobs/doorbell.js";

export interface FollowDeps {
  pool: Queryable;
  bus: SignalBus;
  pollMs: number;
}

/** Yields the turn's events after `afterSeq` until its closing event, or until `signal` aborts. */
export async function* followTurn(deps: FollowDeps, turnId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<TurnEvent> {
  const doorbell = new Doorbell();
  const unsubscribe = deps.bus.subscribe(Channel.turn, (id) => {
    if (id === turnId) doorbell.ring();
  });
  try {
    let seq = afterSeq;
    while (!signal?.aborted) {
      const events = await eventsAfter(deps.pool, turnId, seq);
      for (const event of events) {
        seq = event.seq;
        yield event;
        if (event.kind !== "delta") return;
      }
      if (events.length === 0) await doorbell.wait(deps.pollMs, signal);
    }
  } finally {
    unsubscribe();
  }
}

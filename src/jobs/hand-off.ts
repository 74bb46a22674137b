// A turn handed to the inference worker beside the web role that stores it (`psyche serve`):
// when that worker has room now and nothing may wait in the queue before it, the turn is stored
// already claimed for it, its job inserted taken (db/sql/pgboss-jobs.ts, insertTakenJob), and
// handed over in memory. No signal, no take statement: one round trip less on the first
// token's path, and for chats at once no takes queuing one behind another (docs/decisions.md,
// "A turn handed to the worker beside it"). Anything else goes the queue's way.
import type { ClaimedTurn } from "../db/sql/turns.js";

/** The inference worker of this process, as the web role sees it. */
export interface TurnTaker {
  /**
   * Room for one chat, held until it is handed or released; undefined when there is none now,
   * or something may wait in the queue that came first.
   */
  reserve(): TurnReservation | undefined;
}

export interface TurnReservation {
  /** The worker the turn is stored claimed for. */
  readonly workerId: string;
  /** The turn is stored (its transaction committed), claimed for workerId: the worker runs it. */
  hand(taken: { jobId: string; turn: ClaimedTurn }): void;
  /** Nothing was stored for it (or it was handed): the room is the worker's again. Idempotent. */
  release(): void;
}

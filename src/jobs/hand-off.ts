// A turn handed to the worker beside the web role that stores it (`psyche serve`):
// when that worker has room now and nothing may wait in the queue before it, the turn is stored
// already claimed for it, its job inserted taken (db/sql/pgboss-jobs.ts, insertTakenJob), and
// handed over in memory. No signal, no take statement: one round trip less on the first
// token's path, and for chats at once no takes queuing one behind another (docs/decisions.md,
// "A turn handed to the worker beside it"). Anything else goes the queue's way.
//
// A chat's turn is handed just before its storing statement runs, as that statement will store
// it (db/sql/turns.ts, insertedTurn), so the worker reads its prompt while it is stored (the
// store is the first token's longest wait before the model: docs/benchmarks.md, "A turn begun
// while it is stored"); `stored` says when the store has committed, and until then the worker
// writes nothing for the turn.
import type { ClaimedTurn } from "../db/sql/turns.js";

/** The inference worker of this process, as the web role sees it. */
export interface TurnTaker {
  /**
   * Room for one chat, held until it is handed or released; undefined when there is none now,
   * or something may wait in the queue that came first.
   */
  reserve(): TurnReservation | undefined;
  /**
   * A turn is being taken in by this process's JavaScript thread (read, checked, stored), until
   * the returned call, handed to this worker or not: its engine leaves that thread a core
   * meanwhile (inference/core-share.ts).
   */
  takingIn(): () => void;
}

/** A turn as it is (or is about to be) stored claimed, and its job. */
export interface HandedTurn {
  jobId: string;
  turn: ClaimedTurn;
}

export interface TurnReservation {
  /** The worker the turn is stored claimed for. */
  readonly workerId: string;
  /**
   * The turn, stored claimed for workerId, or being stored: the worker runs it. `stored`
   * resolves once the turn's store has committed, and rejects where it failed (nothing of the
   * turn exists then: the worker drops it and writes nothing).
   */
  hand(taken: HandedTurn & { stored: Promise<void> }): void;
  /** Nothing was stored for it (or it was handed): the room is the worker's again. Idempotent. */
  release(): void;
}

/** `take`, counted as this process taking a turn in (TurnTaker.takingIn) where it has a worker. */
export async function takenIn<T>(taker: TurnTaker | undefined, take: () => Promise<T>): Promise<T> {
  const done = taker?.takingIn();
  try {
    return await take();
  } finally {
    done?.();
  }
}

/** A promise and its settling, for a store's end; a rejection nobody waits for is not unhandled. */
export function settlement(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

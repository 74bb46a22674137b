// Requests read before any is taken in. Node's event loop accepts one connection a turn (strace
// of `psyche serve` on Node 20: one accept4 between two epoll waits, the next connection's on
// the next turn), and the turn that reads a request goes on to run what its handler sets off
// on the JavaScript thread before the loop polls again: for a chat its translation, its
// storing statement sent, its prompt rendered, tokenized and queued, 1-2 ms on two cores. Four
// chats sent at once were read a turn apart each, the fourth 5-15 ms after it was written, and
// the model read their prompts in two or three batches while the last still waited to be read
// (llama-server's HTTP threads read all four at once). Here a request's handler waits for a
// turn of the loop that accepted no connection and read no request, at most `maxWaitMs`: a
// burst is read whole and its prompts reach the model together (docs/benchmarks.md, "A burst
// read whole"); a lone request waits two turns of an idle loop, microseconds.
import type { EventEmitter } from "node:events";

/** The longest a request waits for others arriving with it (ms). */
export const INTAKE_MAX_WAIT_MS = 10;

export class Intake {
  private arrivals = 0;
  /** The wait under way, shared by every request that arrives during it (one look a turn for a burst, not one each). */
  private waiting: Promise<void> | undefined;

  /** `server`: a node:http server (its `connection` and `request` events are counted). */
  constructor(
    server: EventEmitter,
    private readonly maxWaitMs = INTAKE_MAX_WAIT_MS,
  ) {
    const arrived = () => {
      this.arrivals++;
    };
    server.prependListener("connection", arrived);
    server.prependListener("request", arrived);
  }

  /** Resolves on the first turn of the loop that brought nothing new, or once `maxWaitMs` have passed since the wait began. */
  settled(): Promise<void> {
    this.waiting ??= new Promise((resolve) => {
      const started = performance.now();
      const done = () => {
        this.waiting = undefined;
        resolve();
      };
      // An immediate set from a request's callback (the poll phase) runs in this same turn's
      // check phase, before any new poll: the count is taken there, and compared a turn later.
      const look = (): void => {
        const seen = this.arrivals;
        setImmediate(() => (this.arrivals !== seen && performance.now() - started < this.maxWaitMs ? look() : done()));
      };
      setImmediate(look);
    });
    return this.waiting;
  }
}

// pglite-socket 0.2.17 serves many client connections from one PGlite backend through a queue
// of protocol messages. It keeps one connection's messages together only inside a
// transaction; outside one it interleaves them message by message. The extended protocol
// (Parse, Bind, Describe, Execute ... Sync), which pg uses for every parameterized query, then
// breaks: another connection's Bind replaces the unnamed portal before this one's Execute
// ("portal does not exist"), or, worse, this Execute runs the other's portal. Measured here
// with 8 concurrent memory stores. This keeps each connection's group of messages together
// until its Sync (or a simple Query), as one backend requires.
import type { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import type { PGlite } from "@electric-sql/pglite";

interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  timestamp: number;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (err: unknown) => void;
}

/** The parts of pglite-socket's internal QueryQueueManager this relies on. */
interface QueryQueue {
  queue: QueuedMessage[];
  processing: boolean;
  lastHandlerId: number | null;
  db: PGlite;
  processQueue(): Promise<void>;
  clearQueueForHandler(handlerId: number): void;
}

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'

/** True when a message closes its group: Sync, a simple Query, Terminate, or a startup packet. */
export function endsGroup(message: Uint8Array): boolean {
  const type = message[0];
  return type === SYNC || type === QUERY || type === TERMINATE || type === 0;
}

export function keepProtocolGroupsTogether(server: PGLiteSocketServer): void {
  const q = (server as unknown as { queryQueue?: QueryQueue }).queryQueue;
  if (!q || !Array.isArray(q.queue) || typeof q.processQueue !== "function" || typeof q.clearQueueForHandler !== "function") {
    throw new Error(
      "pglite-socket's query queue is not the one src/db/protocol-groups.ts was written for (0.2.17): install the version package.json pins",
    );
  }
  /** The connection whose group is open (it sent messages after its last Sync). */
  let openGroup: number | null = null;

  q.processQueue = async function processQueue(this: QueryQueue): Promise<void> {
    if (this.processing || this.queue.length === 0) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        // A connection inside a transaction or inside a message group goes on alone.
        const owner = openGroup ?? (this.db.isInTransaction() ? this.lastHandlerId : null);
        let item: QueuedMessage | undefined;
        if (owner !== null) {
          const index = this.queue.findIndex((m) => m.handlerId === owner);
          if (index === -1) break; // wait for the owner's next message
          item = this.queue.splice(index, 1)[0];
        } else {
          item = this.queue.shift();
        }
        if (!item) break;
        const current = item;
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(current.message, {
              onRawData: (data: Uint8Array) => ((bytes += data.length), current.onData(data)),
            }),
          );
        } catch (err) {
          openGroup = null;
          current.reject(err);
          continue;
        }
        openGroup = endsGroup(current.message) ? null : current.handlerId;
        this.lastHandlerId = current.handlerId;
        current.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  };

  const clear = q.clearQueueForHandler.bind(q);
  q.clearQueueForHandler = (handlerId: number) => {
    clear(handlerId);
    // A connection that went away mid-group must not hold the backend.
    if (openGroup === handlerId) {
      openGroup = null;
      void q.processQueue();
    }
  };
}

// One statement for the events a worker's turns write in the same turn of the event loop. The
// chats of one decode step are sampled together (inference/llama-internals.ts, sampleInOneCall),
// so their first pieces, and later their spaced writes, ask to be written at the same moment:
// four chats at once made four inserts, one behind another on the one embedded database, before
// the last first token could be relayed (docs/benchmarks.md, "A chat turn's stages"). A write
// alone goes as it always went (appendEvent).
import { type AppendResult, appendEvent, appendEvents, type EventAppend } from "../db/sql/turn-events.js";
import type { Queryable } from "../db/pool.js";

interface Waiting {
  row: EventAppend;
  resolve: (r: AppendResult) => void;
  reject: (err: unknown) => void;
}

export class EventBatch {
  private waiting: Waiting[] = [];
  /** Statements written, and the rows they held. */
  readonly stats = { statements: 0, rows: 0 };

  constructor(private readonly pool: Queryable) {}

  /** Writes `row` with the others asked for before the event loop's next turn; as appendEvent. */
  append(row: EventAppend): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      // setImmediate, not a microtask: the other chats of a step reach here in the microtasks
      // that follow the step's samples, all before the loop turns.
      if (this.waiting.push({ row, resolve, reject }) === 1) setImmediate(() => void this.write());
    });
  }

  private async write(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    this.stats.statements++;
    this.stats.rows += batch.length;
    if (batch.length === 1) return this.alone(batch[0]!);
    try {
      const results = await appendEvents(
        this.pool,
        batch.map((w) => w.row),
      );
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch {
      // One bad row fails the statement: each then goes alone, so it fails only its own turn.
      await Promise.all(batch.map((w) => this.alone(w)));
    }
  }

  private async alone({ row, resolve, reject }: Waiting): Promise<void> {
    try {
      resolve(await appendEvent(this.pool, row.turnId, row.workerId, row.seq, row.kind, row.content, row.tokens));
    } catch (err) {
      reject(err);
    }
  }
}

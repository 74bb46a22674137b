// Appends generated text to turn_events in small batches: the first piece at once (time to
// first token), then at most one write per `flushMs()`. Each write signals the turn's channel
// and reports whether the turn was cancelled or taken from this worker. A reasoning model's
// thought and its reply are events of their own kinds ("reasoning", "delta"), written in order.
import type { TailEvent } from "../db/sql/turns.js";
import type { EventBatch } from "./event-batch.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { encodeTurnSignal } from "../jobs/turn-signal.js";

export interface EventWriterOptions {
  /** Where the writes go: one statement with the other turns' writes of the same moment. */
  events: EventBatch;
  bus: SignalBus;
  turnId: string;
  workerId: string;
  /** The last sequence number already written for this turn. */
  lastSeq: number;
  /** The least time between two writes, asked at each write (it may depend on the load). */
  flushMs: () => number;
  /** Called once when cancellation is requested or the worker lost the turn. */
  onStop: (reason: "cancelled" | "lost") => void;
  /**
   * A turn handed while it is stored (jobs/hand-off.ts): resolves true once it is, false where
   * its store failed. Nothing is written before; nothing at all after false.
   */
  stored?: Promise<boolean> | undefined;
  /** Called once, when the first event has been written and signalled, or the writer stops without one. */
  onFirstWrite?: (() => void) | undefined;
}

type PieceKind = "delta" | "reasoning";

export class EventWriter {
  /** Text not yet written, in runs of one kind (a thought, then the reply). */
  private runs: { kind: PieceKind; text: string; tokens: number }[] = [];
  private seq: number;
  private lastFlush = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The turn's store failed: there is nothing to write to. */
  private unstored = false;
  lost = false;
  failure: unknown;

  private onFirstWrite: (() => void) | undefined;

  constructor(private readonly o: EventWriterOptions) {
    this.onFirstWrite = o.onFirstWrite;
    this.seq = o.lastSeq;
    if (o.stored)
      this.inFlight = o.stored.then((ok) => {
        this.unstored = !ok;
      });
  }

  push(text: string, tokens: number, kind: PieceKind = "delta"): void {
    const last = this.runs.at(-1);
    if (last?.kind === kind) {
      last.text += text;
      last.tokens += tokens;
    } else this.runs.push({ kind, text, tokens });
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.o.flushMs() - Date.now());
    if (wait === 0) this.flushSoon();
    else this.timer = setTimeout(() => this.flushSoon(), wait);
  }

  private flushSoon(): void {
    this.timer = undefined;
    this.inFlight = this.inFlight.then(() => this.write());
  }

  /** The oldest buffered run as the next event, taken from the buffer; undefined when there is none to write. */
  private take(): Required<TailEvent> | undefined {
    while (this.runs[0]?.text === "") this.runs.shift();
    const run = this.runs.shift();
    if (!run || this.lost || this.unstored) return undefined;
    return { seq: ++this.seq, content: run.text, tokens: run.tokens, kind: run.kind };
  }

  /** Writes the buffered runs, a thought's before the reply's (usually one run). */
  private async write(): Promise<void> {
    for (let event = this.take(); event; event = this.take()) if (!(await this.writeEvent(event))) return;
  }

  private async writeEvent({ seq, content: text, tokens, kind }: Required<TailEvent>): Promise<boolean> {
    this.lastFlush = Date.now();
    try {
      const res = await this.o.events.append({ turnId: this.o.turnId, workerId: this.o.workerId, seq, kind, content: text, tokens });
      if (!res.written) {
        this.lost = true;
        this.stop("lost");
        return false;
      }
      this.o.bus.notify(Channel.turn, encodeTurnSignal(this.o.turnId, { seq, kind, content: text }));
      this.firstWritten();
      if (res.cancelRequested) this.stop("cancelled");
      return true;
    } catch (err) {
      this.failure = err;
      this.stop("lost");
      return false;
    }
  }

  private firstWritten(): void {
    const call = this.onFirstWrite;
    this.onFirstWrite = undefined;
    call?.();
  }

  private stop(reason: "cancelled" | "lost"): void {
    this.firstWritten();
    if (this.stopped) return;
    this.stopped = true;
    this.o.onStop(reason);
  }

  /**
   * Waits for the writes under way and hands over what is still buffered, unwritten, as the
   * next event: the turn's end writes it in its own statement (db/sql/turns.ts, finishTurn).
   * Undefined when nothing is left, or the turn was lost.
   */
  async drain(): Promise<TailEvent | undefined> {
    this.cancelTimer();
    this.firstWritten();
    await this.inFlight;
    // All but the last run are written here (a thought still buffered when the reply ended: rare).
    while (this.runs.filter((r) => r.text).length > 1) {
      const event = this.take();
      if (!event || !(await this.writeEvent(event))) return undefined;
    }
    return this.take();
  }

  private cancelTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Writes whatever is buffered and waits for all writes. */
  async flush(): Promise<void> {
    this.cancelTimer();
    this.inFlight = this.inFlight.then(() => this.write());
    await this.inFlight;
  }
}

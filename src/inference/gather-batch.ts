// When node-llama-cpp decodes its next batch (a context's `batching.dispatchSchedule`). Its own
// schedule decodes on the next turn of the event loop after the first sequence queues a token.
// With several chats generating at once, one of them is often still sampling its last token
// then, a few tenths of a millisecond behind: four streams went as batches of three, and as the
// ids in a batch then no longer ran consecutively, llama.cpp decoded most of them in several
// passes (scripts/patch-node-llama-cpp.mjs says why). This schedule waits, for at most
// `maxWaitMs`, until every sequence that is generating has queued its token, so each step of
// the model reads the weights once for all of them.

export interface GatherOptions {
  /** Sequences with tokens queued now; undefined where that cannot be seen (then each batch goes at once). */
  queued(): number | undefined;
  /** Sequences generating now: each will queue a token soon. */
  generating(): number;
  /**
   * Whether a batch is being decoded or sampled now. Its sequences queue their next tokens as
   * each is sampled, so the wait counts only from its end: a dispatch before it would take
   * whatever had queued by then.
   */
  underWay(): boolean;
  /** The longest a queued token waits for the others (ms). */
  maxWaitMs: number;
}

/** The batches decoded, and those that held every generating sequence. */
export interface GatherStats {
  batches: number;
  whole: number;
}

export class BatchGather {
  readonly stats: GatherStats = { batches: 0, whole: 0 };

  constructor(private readonly o: GatherOptions) {}

  /** node-llama-cpp's `dispatchSchedule`: calls `dispatch` once the batch is whole or the wait is over. */
  readonly schedule = (dispatch: () => void): void => {
    let since: number | undefined;
    const check = (): void => {
      const queued = this.o.queued();
      const whole = queued !== undefined && queued >= this.o.generating();
      if (!this.o.underWay()) since ??= performance.now();
      if (!whole && queued !== undefined && (since === undefined || performance.now() - since < this.o.maxWaitMs)) {
        // setImmediate, not a timer: a sampled token arrives as I/O, which the loop polls
        // between immediates; a timer's 1 ms floor would cost more than the wait saves.
        setImmediate(check);
        return;
      }
      dispatch();
    };
    setImmediate(check);
  };

  /** A batch of `sequences` is about to be decoded (told by the patched context). */
  decoding(sequences: number): void {
    this.stats.batches++;
    if (sequences >= this.o.generating()) this.stats.whole++;
  }
}

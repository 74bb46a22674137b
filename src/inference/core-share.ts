// The core the model's threads leave to this process's JavaScript thread while it takes turns
// in. Where the model is given every core (`--threads` at least the cores, the default), its
// threads and the JavaScript thread outnumber the cores whenever both work; the JavaScript
// thread's work while chats arrive (their HTTP, their storing statements on the embedded
// database, their prompts rendered and their slots readied) then waits on cores the model's
// threads hold, and the model's OpenMP team, one thread of it preempted, waits at its next
// barrier. Traced with four chats arriving at once on two cores (docs/benchmarks.md, "A core
// left to the server while chats arrive"), the fourth request was read some 20 ms after it was
// sent, and a batch of three prompts took 10-24 ms against 5.6 alone. llama-server has no such
// thread: its HTTP threads sleep while it decodes.
//
// Only a short batch leaves it: a thread fewer makes a batch up to twice as long (on two
// threads), and a long one holds that for all of it, where the JavaScript thread's work is a
// few milliseconds a chat. The bench model on two cores (steps of 25-40 ms) read four chats'
// last first token at 946-1,135 ms with every batch yielding against 752-782 without.

/** A batch expected to take longer than this on every thread keeps every thread. */
export const SHORT_BATCH_MS = 10;
/** The batches of a size remembered: the least of their costs is the estimate (others ran beside the JavaScript thread). */
const RECENT = 8;

/** Counts the turns this process is taking in, and says how many threads a batch decodes with. */
export class CoreShare {
  private takingIn = 0;
  // By a batch's tokens in powers of two: the cost a token of the last few batches decoded on every thread.
  private readonly perToken: number[][] = [];

  /**
   * `cores`: the cores the process may use (os.availableParallelism); `shortMs`: the longest
   * batch, measured on every thread, that leaves a core (tests change it).
   */
  constructor(
    private readonly cores: number,
    private readonly shortMs = SHORT_BATCH_MS,
  ) {}

  /** A turn is being taken in (read, checked and stored) on the JavaScript thread, until the returned call. */
  taking(): () => void {
    this.takingIn++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.takingIn--;
    };
  }

  /** Turns being taken in now. */
  get busy(): number {
    return this.takingIn;
  }

  /** A batch of `tokens` decoded on every thread asked for took `ms`. */
  decoded(tokens: number, ms: number): void {
    if (!(tokens > 0) || !(ms >= 0)) return;
    const recent = (this.perToken[sizeClass(tokens)] ??= []);
    recent.push(ms / tokens);
    if (recent.length > RECENT) recent.shift();
  }

  /**
   * What a batch of `tokens` should take on every thread: from batches of its size, or else of
   * the nearest smaller size, whose tokens cost more each (an estimate on the long side);
   * undefined where none smaller has been measured.
   */
  expectedMs(tokens: number): number | undefined {
    for (let size = sizeClass(tokens); size >= 0; size--) {
      const recent = this.perToken[size];
      if (recent?.length) return Math.max(1, tokens) * Math.min(...recent);
    }
    return undefined;
  }

  /**
   * The threads a batch of `tokens` decodes with, of the `asked` the context would use: one
   * fewer while the JavaScript thread takes turns in or readies slots (`preparing` of them),
   * where the model would otherwise hold every core and the batch is short (SHORT_BATCH_MS,
   * measured; not yet measured: long); as asked otherwise, so a stream generating alone, chats
   * generating with nothing arriving, and a long batch decode on every thread.
   */
  threadsFor(asked: number, preparing: number, tokens: number): number {
    const contended = asked > 1 && asked >= this.cores && (this.takingIn > 0 || preparing > 0);
    if (!contended) return asked;
    const expected = this.expectedMs(tokens);
    return expected !== undefined && expected <= this.shortMs ? asked - 1 : asked;
  }
}

/** A batch's size class: its tokens' power of two. */
const sizeClass = (tokens: number): number => Math.floor(Math.log2(Math.max(1, tokens)));

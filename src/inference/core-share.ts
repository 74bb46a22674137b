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

/** Counts the turns this process is taking in, and says how many threads a batch decodes with. */
export class CoreShare {
  private takingIn = 0;

  /** `cores`: the cores the process may use (os.availableParallelism). */
  constructor(private readonly cores: number) {}

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

  /**
   * The threads a batch decodes with, of the `asked` the context would use: one fewer while
   * the JavaScript thread takes turns in or readies slots (`preparing` of them), where the model
   * would otherwise hold every core; as asked otherwise, so a stream generating alone, or chats
   * generating with nothing arriving, decode on every thread.
   */
  threadsFor(asked: number, preparing: number): number {
    const contended = asked > 1 && asked >= this.cores;
    return contended && (this.takingIn > 0 || preparing > 0) ? asked - 1 : asked;
  }
}

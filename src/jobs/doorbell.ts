/**
 * A flag that a signal sets and a consumer waits on. A ring between "I looked and found
 * nothing" and "I wait" is not lost: wait() returns at once when the flag is already set.
 */
export class Doorbell {
  private rung = false;
  private waiter: (() => void) | undefined;

  ring(): void {
    this.rung = true;
    this.waiter?.();
  }

  /**
   * Resolves when rung (now or later), after `ms` at most, or when `signal` aborts: true when
   * it was rung.
   */
  wait(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.rung || signal?.aborted) {
      const rung = this.rung;
      this.rung = false;
      return Promise.resolve(rung);
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.waiter = undefined;
        const rung = this.rung;
        this.rung = false;
        resolve(rung);
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      this.waiter = done;
    });
  }
}

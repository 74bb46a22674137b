/** Things to stop, stopped in reverse order of starting; failures are logged, not fatal. */
export class StopStack {
  private readonly steps: { name: string; stop: () => Promise<unknown> }[] = [];

  push(name: string, stop: () => Promise<unknown>): void {
    this.steps.push({ name, stop });
  }

  async unwind(onError?: (name: string, err: unknown) => void): Promise<void> {
    while (this.steps.length) {
      const step = this.steps.pop()!;
      try {
        await step.stop();
      } catch (err) {
        onError?.(step.name, err);
      }
    }
  }
}

import type { Config } from "../config.js";
import type { Logger } from "../log.js";
/** A step of shutting down that did not finish within its time. */
export class StopOverrun extends Error {
  override name = "StopOverrun";
  constructor(step: string, limitMs: number) {
    super(`stopping ${step} did not finish within ${limitMs} ms; going on without it`);
  }
}

/** A step's time to stop: the shutdown grace (which the worker and the HTTP server wait out) and some. */
export function stopStepLimitMs(config: { shutdownGraceSeconds: number }): number {
  return (config.shutdownGraceSeconds + 15) * 1000;
}

/**
 * Things to stop, stopped in reverse order of starting; failures are logged, not fatal. A step
 * that hangs is given `stepLimitMs` and then left behind, so a process always gets to its
 * exit (a process manager's stop must not wait on one stuck connection or job).
 */
export class StopStack {
  private readonly steps: { name: string; stop: () => Promise<unknown> }[] = [];

  constructor(private readonly stepLimitMs = 30_000) {}

  push(name: string, stop: () => Promise<unknown>): void {
    this.steps.push({ name, stop });
  }

  /** Stops every step; returns the names of those that failed or overran. */
  async unwind(onError?: (name: string, err: unknown) => void): Promise<string[]> {
    const troubled: string[] = [];
    while (this.steps.length) {
      const step = this.steps.pop()!;
      let timer: NodeJS.Timeout | undefined;
      const overran = new Promise<"overran">((resolve) => {
        timer = setTimeout(() => resolve("overran"), this.stepLimitMs);
      });
      try {
        if ((await Promise.race([step.stop().then(() => "stopped" as const), overran])) === "overran") {
          troubled.push(step.name);
          onError?.(step.name, new StopOverrun(step.name, this.stepLimitMs));
        }
      } catch (err) {
        troubled.push(step.name);
        onError?.(step.name, err);
      } finally {
        clearTimeout(timer);
      }
    }
    return troubled;
  }
}

/** What every process's entry hands back: how to stop it. */
export interface Running {
  stop(): Promise<unknown>;
}

/** What each role of a process is built with. */
export interface Shared {
  config: Config;
  log: Logger;
  stack: StopStack;
}

/** How long a separately started role waits for the database to come up. */
export const DATABASE_WAIT_MS = 30_000;

/** Unwinds `stack`, logging what failed. */
export const stopper = (stack: StopStack, log: Logger) => () => stack.unwind((name, err) => log.error({ err }, `stopping ${name} failed`));

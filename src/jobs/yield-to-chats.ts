// Background work yields to chats. A turn's memory (workers/memory-worker.ts) is formed once no
// chat is queued or being generated, or once its job has waited `deferMs`: a burst of chats then
// does not share the cores and the database with forming the memories of its first replies (on
// PostgreSQL that was a third of a 40-chat burst's wall time, bench/vs-llama-server.ts), and a
// server that is never idle still forms every memory, that much later.
import type { Doorbell } from "./doorbell.js";

export interface YieldDeps {
  /** Whether a chat is queued or being generated (db/sql/turns.ts, chatsUnderWay). */
  busy: () => Promise<boolean>;
  /** Rung when a turn ends, so the check runs again then. */
  doorbell: Doorbell;
  /** The longest wait between checks without a ring (a turn that ended in another process may not ring). */
  pollMs: number;
}

/**
 * Resolves when no chat is under way, when `since` is `deferMs` old, or when `signal` aborts;
 * true when it waited at all.
 */
export async function yieldToChats(deps: YieldDeps, since: Date, deferMs: number, signal: AbortSignal): Promise<boolean> {
  let waited = false;
  for (;;) {
    const left = since.getTime() + deferMs - Date.now();
    if (left <= 0 || signal.aborted || !(await deps.busy())) return waited;
    waited = true;
    await deps.doorbell.wait(Math.min(left, deps.pollMs), signal);
  }
}

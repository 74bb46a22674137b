// Background work yields to chats. A turn's memory (workers/memory-worker.ts) is formed once no
// chat is queued or being generated, or once its job has waited `deferMs`: a burst of chats then
// does not share the cores and the database with forming the memories of its first replies, and
// a server that is never idle still forms every memory, that much later.
//
// "No chat" must also have lasted `quietMs`: a coding agent (or a client's next message) sends
// its next request right after a reply, and a memory formed in between takes the cores and the
// database from that request's first token (docs/decisions.md, "A turn's memory waits for a
// second of quiet").
import type { Doorbell } from "./doorbell.js";

export interface YieldDeps {
  /** Whether a chat is queued or being generated (db/sql/turns.ts, chatsUnderWay). */
  busy: () => Promise<boolean>;
  /** Rung when a turn ends, so the check runs again then. */
  doorbell: Doorbell;
  /** The longest wait between checks without a ring (a turn that ended in another process may not ring). */
  pollMs: number;
  /** How long no chat must have been under way; 0 (the default): none is enough. */
  quietMs?: number;
}

export interface YieldTimes {
  /** When the oldest waiting piece of work was queued: it waits `deferMs` from then at most. */
  since: Date;
  deferMs: number;
  /** When the last chat known to this work ended (its quiet counts from then). */
  lastChatEnded?: Date | undefined;
}

/**
 * Resolves when no chat has been under way for `quietMs`, when `since` is `deferMs` old, or
 * when `signal` aborts; true when it waited at all.
 */
export async function yieldToChats(deps: YieldDeps, times: YieldTimes, signal: AbortSignal): Promise<boolean> {
  const quietMs = deps.quietMs ?? 0;
  let quietUntil = (times.lastChatEnded?.getTime() ?? 0) + quietMs;
  let sawChat = false;
  let waited = false;
  for (;;) {
    const left = times.since.getTime() + times.deferMs - Date.now();
    if (left <= 0 || signal.aborted) return waited;
    const quiet = quietUntil - Date.now();
    if (quiet > 0) {
      waited = true;
      // A ring is a turn's end: the quiet starts again from it.
      if (await deps.doorbell.wait(Math.min(quiet, left), signal)) quietUntil = Date.now() + quietMs;
      continue;
    }
    if (!(await deps.busy())) {
      if (!sawChat || quietMs === 0) return waited;
      // The chats seen under way have ended (about now): quiet from here.
      sawChat = false;
      quietUntil = Date.now() + quietMs;
      continue;
    }
    sawChat = true;
    waited = true;
    // A ring is a turn's end. With a quiet to keep, no quiet can be over before one has passed
    // from it, so the quiet starts there, without asking again: asking at each ring cost one
    // question per turn in a burst of chats.
    if ((await deps.doorbell.wait(Math.min(left, deps.pollMs), signal)) && quietMs > 0) {
      quietUntil = Date.now() + quietMs;
      sawChat = false;
    }
  }
}

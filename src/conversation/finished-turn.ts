// Waiting for a turn to end, for callers that answer with the whole reply (a non-streaming
// chat completion, MCP's chat tool).
import { getTurn, type Turn } from "../db/sql/turns.js";
import type { FollowDeps, TurnFollower } from "./follow-turn.js";
import { UserError, type UserErrorOptions } from "../errors.js";

export class TurnNotFinished extends UserError {
  override name = "TurnNotFinished";
  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { status: 500, code: "generation_failed", ...opts });
  }
}

/**
 * Follows the turn to its closing event and reads it back. A caller that gives up (`signal`)
 * does not cancel the turn: it finishes and is stored. Throws TurnNotFinished when it failed
 * or is still going.
 */
export async function finishedTurn(deps: FollowDeps, follower: TurnFollower, signal?: AbortSignal): Promise<Turn> {
  for await (const _ of follower.events({ afterSeq: 0, signal, fresh: true })) {
    // the text is read whole from the turn once it is finished
  }
  const turn = await getTurn(deps.pool, follower.turnId);
  if (!turn || turn.status === "failed" || turn.status === "queued" || turn.status === "running") {
    throw new TurnNotFinished(turn?.error ?? "the turn did not finish");
  }
  return turn;
}

// How every surface that answers a turn (the chat API, MCP's chat and add_tool_result) begins
// one: the reply budget checked against the server's ceiling, then a follower subscribed
// before the turn exists, so its first signal cannot be missed.
import { randomUUID } from "node:crypto";
import { invalidRequest } from "../errors.js";
import { type FollowDeps, TurnFollower } from "./follow-turn.js";

/**
 * The reply budget: the request's, else the server's. Above the server's ceiling it is
 * clamped to the ceiling (agents ask for 32,000 and more; the reply's finish reason says when
 * the budget was reached), or with `strict` (--strict-params) a 400.
 */
export function replyBudget(requested: number | null | undefined, ceiling: number, field = "max_tokens", strict = false): number {
  const maxTokens = requested ?? ceiling;
  if (maxTokens > ceiling && strict)
    throw invalidRequest(
      `${field} is ${maxTokens}, above this server's limit of ${ceiling} (PSYCHE_MAX_TOKENS; this server runs with --strict-params)`,
      field,
    );
  return Math.min(maxTokens, ceiling);
}

/**
 * Subscribes a follower to a new turn id, then runs `start` with that id. When `start` fails
 * the follower is closed and the error goes on.
 */
export async function startFollowed<T>(
  deps: FollowDeps,
  start: (turnId: string) => Promise<T>,
): Promise<{ follower: TurnFollower; started: T }> {
  const follower = new TurnFollower(deps, randomUUID());
  try {
    return { follower, started: await start(follower.turnId) };
  } catch (err) {
    follower.close();
    throw err;
  }
}

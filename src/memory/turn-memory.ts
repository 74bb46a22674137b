// How a finished turn becomes a memory. A chat is kept as the exchange: what the user said and
// the reply. An exploration (a client exploring on its own while the user is away, turns.purpose)
// has a synthetic prompt that is scaffolding, not something anyone said: what is kept is what it
// found, and at most one such memory per conversation in EXPLORATION_WINDOW_SECONDS, so that a
// client that explores every few seconds does not leave a memory per tick; the same words again
// are folded into the earlier memory by Memory.remember.
import type { TurnExchange } from "../db/sql/turns.js";

/** One exploration memory per conversation in this long. */
export const EXPLORATION_WINDOW_SECONDS = 600;
export const EXPLORATION_TAG = "exploration";

export interface TurnMemory {
  content: string;
  tags: string[];
}

/** What the finished turn adds to memory, or null when it adds nothing. */
export function turnMemory(exchange: Pick<TurnExchange, "status" | "user" | "reply" | "purpose">, explorationKeptRecently: boolean): TurnMemory | null {
  if (exchange.status !== "done" || !exchange.reply?.trim()) return null;
  if (exchange.purpose === "exploration") {
    if (explorationKeptRecently) return null;
    return { content: `Exploring on its own while the user was away, Psyche found: ${exchange.reply.trim()}`, tags: [EXPLORATION_TAG] };
  }
  return { content: exchange.user ? `User: ${exchange.user}\nPsyche: ${exchange.reply}` : `Psyche: ${exchange.reply}`, tags: [] };
}

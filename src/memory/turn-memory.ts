// How a finished turn becomes a memory. A chat is kept as the exchange: what the user said and
// the reply. An exploration (a client exploring on its own while the user is away, turns.purpose)
// has a synthetic prompt that is scaffolding, not something anyone said: what is kept is what it
// found, and at most one such memory per conversation in EXPLORATION_WINDOW_SECONDS, so that a
// client that explores every few seconds does not leave a memory per tick; the same words again
// are folded into the earlier memory by Memory.remember. What a coding agent adds to a user's
// message for the model (Claude Code's <system-reminder> blocks: file states, todo lists, the
// date) is the agent's scaffolding, not the user's words, and is not kept.
import type { Pool } from "../db/pool.js";
import { memoryFromSource, taggedInConversationSince } from "../db/sql/memories.js";
import { moodFromSource } from "../db/sql/mood.js";
import { turnExchange, type TurnExchange } from "../db/sql/turns.js";
import type { MoodKeeper } from "../mood/mood-keeper.js";
import type { Memory } from "./memory.js";

/** One exploration memory per conversation in this long. */
export const EXPLORATION_WINDOW_SECONDS = 600;
export const EXPLORATION_TAG = "exploration";

export interface TurnMemory {
  content: string;
  tags: string[];
}

/** Blocks an agent puts into a user's message for the model. */
const AGENT_SCAFFOLDING = /<system-reminder>[\s\S]*?<\/system-reminder>/g;

/** A user message without what an agent added to it. */
export function userWords(text: string): string {
  return text.replace(AGENT_SCAFFOLDING, "").trim();
}

/** What the finished turn adds to memory, or null when it adds nothing. */
export function turnMemory(
  exchange: Pick<TurnExchange, "status" | "user" | "reply" | "purpose">,
  explorationKeptRecently: boolean,
): TurnMemory | null {
  if (exchange.status !== "done" || !exchange.reply?.trim()) return null;
  if (exchange.purpose === "exploration") {
    if (explorationKeptRecently) return null;
    return { content: `Exploring on its own while the user was away, Psyche found: ${exchange.reply.trim()}`, tags: [EXPLORATION_TAG] };
  }
  const user = exchange.user ? userWords(exchange.user) : "";
  return { content: user ? `User: ${user}\nPsyche: ${exchange.reply}` : `Psyche: ${exchange.reply}`, tags: [] };
}

export interface RememberTurnDeps {
  pool: Pool;
  memory: Memory;
  mood: MoodKeeper;
}

/**
 * Forms the memory of a finished turn and moves the mood by it (the memory worker's job, off
 * the reply's path). Idempotent: a retried job skips what an earlier attempt already stored.
 */
export async function rememberTurn(deps: RememberTurnDeps, turnId: string, signal: AbortSignal): Promise<void> {
  const exchange = await turnExchange(deps.pool, turnId);
  if (!exchange || exchange.status !== "done" || !exchange.reply) return;
  if (await memoryFromSource(deps.pool, "turn", turnId)) return;
  const recently =
    exchange.purpose === "exploration" &&
    (await taggedInConversationSince(deps.pool, exchange.conversation_id, EXPLORATION_TAG, EXPLORATION_WINDOW_SECONDS));
  const kept = turnMemory(exchange, recently);
  if (!kept) return;
  const remembered = await deps.memory.remember({
    kind: "episodic",
    content: kept.content,
    tags: kept.tags,
    sourceKind: "turn",
    sourceId: turnId,
    conversationId: exchange.conversation_id,
    scope: exchange.scope,
    signal,
  });
  if (!(await moodFromSource(deps.pool, "turn", turnId))) {
    await deps.mood.react({ valence: remembered.scored.valence, arousal: remembered.scored.arousal }, "turn", turnId);
  }
}

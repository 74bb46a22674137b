// What Psyche brings to a turn: its mood, the memories most relevant to the latest user
// message, and, set apart as background, significant insights from its recent reflection and
// dreams, as a system message within a token budget. Dreams reach a chat only that way.
import type { Logger } from "../log.js";
import type { MoodKeeper } from "../mood/mood-keeper.js";
import { describeMood } from "../mood/mood.js";
import type { Memory } from "./memory.js";
import type { RecallFloor } from "./ranking.js";

/** The turn a context is for. */
export interface RecallFor {
  signal?: AbortSignal | undefined;
  /** The conversation's readable scopes (src/scope.ts); every scope when undefined. */
  scopes?: readonly string[] | undefined;
  /**
   * The turn's conversation: its own memories are left out, as its transcript is in the prompt
   * already (conversation/run-turn.ts, buildPrompt); recalled, they would say it twice.
   */
  conversationId?: string | undefined;
}

export interface Recall {
  /** Text for a system message before the latest user message; "" when there is nothing. */
  contextFor(query: string, turn?: RecallFor): Promise<string>;
}

export interface RecallDeps {
  memory: Memory;
  mood: MoodKeeper;
  log: Logger;
  /** Tokens the context may take. */
  budgetTokens: number;
  countTokens: (text: string) => number;
  /** Memories considered before the budget cuts. Default 8. */
  maxMemories?: number;
  /** What a memory must reach to be offered (memory/ranking.ts, bearsOn); unset: the top ones, whatever they are. */
  floor?: RecallFloor | undefined;
  /** Recent insights offered as background: how many, from how many hours back, how significant. Default 2, 24, 0.3. */
  insights?: { limit: number; hours: number; minImportance: number } | undefined;
}

export const BACKGROUND_HEADER =
  "Background from your own recent reflection and dreams, not from this conversation (the user has not seen it; use it only if it helps):";

const age = (then: Date, now: Date): string => {
  const days = Math.floor((now.getTime() - then.getTime()) / 86_400_000);
  if (days < 1) return "today";
  if (days < 2) return "yesterday";
  if (days < 60) return `${days} days ago`;
  return `${Math.round(days / 30)} months ago`;
};

export class MemoryRecall implements Recall {
  constructor(private readonly deps: RecallDeps) {}

  async contextFor(query: string, turn: RecallFor = {}): Promise<string> {
    const { signal, scopes } = turn;
    if (this.deps.budgetTokens <= 0) return "";
    const now = new Date();
    const insights = this.deps.insights ?? { limit: 2, hours: 24, minImportance: 0.3 };
    const [mood, recalled, background] = await Promise.all([
      this.deps.mood.current(now),
      // Dream text is not a memory of the world: it comes only as background, set apart.
      query.trim()
        ? this.deps.memory.recall(query, this.deps.maxMemories ?? 8, {
            signal,
            scopes,
            floor: this.deps.floor,
            exceptConversation: turn.conversationId,
          })
        : Promise.resolve([]),
      insights.limit > 0
        ? this.deps.memory.recentInsights(insights.minImportance, insights.hours, insights.limit, undefined, scopes)
        : Promise.resolve([]),
    ]);
    const lines = [describeMood(mood)];
    let used = this.deps.countTokens(lines[0]!);
    const take = (header: string, texts: { created_at: Date; content: string }[]): string[] => {
      const items: string[] = [];
      for (const m of texts) {
        const item = `- (${age(m.created_at, now)}) ${m.content.replace(/\s+/g, " ").trim()}`;
        const cost = this.deps.countTokens(item) + (items.length === 0 ? this.deps.countTokens(header) : 0);
        if (used + cost > this.deps.budgetTokens) break;
        used += cost;
        items.push(item);
      }
      return items.length ? [header, ...items] : [];
    };
    const remembered = recalled.map((r) => r.memory);
    lines.push(...take("Things you remember that may bear on this (most relevant first):", remembered));
    const offered = new Set(remembered.map((m) => m.id));
    lines.push(
      ...take(
        BACKGROUND_HEADER,
        background.filter((m) => !offered.has(m.id)),
      ),
    );
    if (used > this.deps.budgetTokens) return "";
    return lines.join("\n");
  }
}

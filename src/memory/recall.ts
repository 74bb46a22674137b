// What Psyche brings to a turn: its mood and the memories most relevant to the latest user
// message, as a system message within a token budget.
import type { Logger } from "../log.js";
import type { MoodKeeper } from "../mood/mood-keeper.js";
import { describeMood } from "../mood/mood.js";
import type { Memory } from "./memory.js";

export interface Recall {
  /** Text for a system message before the latest user message; "" when there is nothing. */
  contextFor(query: string, signal?: AbortSignal): Promise<string>;
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
}

const age = (then: Date, now: Date): string => {
  const days = Math.floor((now.getTime() - then.getTime()) / 86_400_000);
  if (days < 1) return "today";
  if (days < 2) return "yesterday";
  if (days < 60) return `${days} days ago`;
  return `${Math.round(days / 30)} months ago`;
};

export class MemoryRecall implements Recall {
  constructor(private readonly deps: RecallDeps) {}

  async contextFor(query: string, signal?: AbortSignal): Promise<string> {
    if (this.deps.budgetTokens <= 0) return "";
    const now = new Date();
    const [mood, recalled] = await Promise.all([
      this.deps.mood.current(now),
      query.trim() ? this.deps.memory.search(query, this.deps.maxMemories ?? 8, signal) : Promise.resolve([]),
    ]);
    const lines = [describeMood(mood)];
    let used = this.deps.countTokens(lines[0]!);
    const header = "Things you remember that may bear on this (most relevant first):";
    const items: string[] = [];
    for (const { memory } of recalled) {
      const item = `- (${age(memory.created_at, now)}) ${memory.content.replace(/\s+/g, " ").trim()}`;
      const cost = this.deps.countTokens(item) + (items.length === 0 ? this.deps.countTokens(header) : 0);
      if (used + cost > this.deps.budgetTokens) break;
      used += cost;
      items.push(item);
    }
    if (used > this.deps.budgetTokens) return "";
    if (items.length) lines.push(header, ...items);
    return lines.join("\n");
  }
}

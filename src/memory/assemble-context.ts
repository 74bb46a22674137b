// Context for an agent's prompt (MCP's assemble_context, called by hook scripts on every user
// prompt): the memories most relevant to the prompt and Psyche's recent insights, as markdown
// within a token budget. The web process has no tokenizer, so tokens are estimated at four
// characters each.
import type { MemoryRow } from "../db/sql/memories.js";
import type { Memory } from "./memory.js";

export interface AssembleOptions {
  query: string;
  maxTokens: number;
  /** Memories considered before the budget cuts. */
  limit: number;
  signal?: AbortSignal | undefined;
}

export interface AssembledContext {
  markdown: string;
  token_estimate: number;
  memory_ids: string[];
  insight_ids: string[];
  /** True when an item was left out for the budget. */
  truncated: boolean;
}

export const MEMORIES_HEADING = "## What Psyche remembers that may bear on this";
export const INSIGHTS_HEADING = "## Psyche's recent insights";
/** Insights from this many hours back count as recent. */
const INSIGHT_HOURS = 7 * 24;
const INSIGHT_LIMIT = 5;
const INSIGHT_MIN_IMPORTANCE = 0.3;

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

const day = (d: Date): string => d.toISOString().slice(0, 10);
const line = (m: MemoryRow): string => `- ${m.content.replace(/\s+/g, " ").trim()} (${m.kind}, ${day(m.created_at)}, id ${m.id})`;

export async function assembleContext(memory: Memory, o: AssembleOptions): Promise<AssembledContext> {
  const [found, insights] = await Promise.all([
    // Dreams are not memories of the world (memory/recall.ts).
    o.query.trim() ? memory.recall(o.query, o.limit, o.signal) : Promise.resolve([]),
    memory.recentInsights(INSIGHT_MIN_IMPORTANCE, INSIGHT_HOURS, INSIGHT_LIMIT, ["insight"]),
  ]);
  // Insights get their own section.
  const memories = found.map((r) => r.memory).filter((m) => m.kind !== "insight");
  const relevantInsights = found.map((r) => r.memory).filter((m) => m.kind === "insight");
  const seen = new Set(relevantInsights.map((m) => m.id));
  const allInsights = [...relevantInsights, ...insights.filter((m) => !seen.has(m.id))];

  let used = 0;
  let truncated = false;
  const section = (heading: string, rows: MemoryRow[]): { text: string; ids: string[] } => {
    const lines: string[] = [];
    const ids: string[] = [];
    for (const m of rows) {
      const item = line(m);
      // A section's heading (and the blank line before it) is paid for by its first item.
      const cost = estimateTokens(`${item}\n`) + (lines.length === 0 ? estimateTokens(`${heading}\n\n`) : 0);
      if (used + cost > o.maxTokens) {
        truncated = true;
        continue;
      }
      used += cost;
      lines.push(item);
      ids.push(m.id);
    }
    return { text: lines.length ? `${heading}\n${lines.join("\n")}` : "", ids };
  };
  const mem = section(MEMORIES_HEADING, memories);
  const ins = section(INSIGHTS_HEADING, allInsights);
  const markdown = [mem.text, ins.text].filter(Boolean).join("\n\n");
  return { markdown, token_estimate: estimateTokens(markdown), memory_ids: mem.ids, insight_ids: ins.ids, truncated };
}

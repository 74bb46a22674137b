// Context for an agent's prompt (MCP's assemble_context, and the user-prompt-submit hook,
// agents/hooks.ts): as markdown within one token budget, the agent session's active GHAP, the
// memories most relevant to the prompt, the experiences among them (resolved GHAPs, remembered
// by agents/sessions.ts), and Psyche's recent insights. The web process has no tokenizer, so
// tokens are estimated at four characters each.
import type { MemoryRow } from "../db/sql/memories.js";
import type { GhapRow } from "../db/sql/agent-sessions.js";
import type { Memory } from "./memory.js";

export const CONTEXT_TYPES = ["memories", "experiences", "insights", "active_ghap"] as const;
export type ContextType = (typeof CONTEXT_TYPES)[number];

export interface AssembleOptions {
  /** Only these scopes' memories (src/scope.ts); every scope when undefined. */
  scopes?: readonly string[] | undefined;
  query: string;
  maxTokens: number;
  /** Memories considered before the budget cuts. */
  limit: number;
  /** What to include; default all. */
  types?: readonly ContextType[] | undefined;
  /** The session's active GHAP, when `active_ghap` is asked for and there is one. */
  activeGhap?: GhapRow | undefined;
  signal?: AbortSignal | undefined;
}

export interface AssembledContext {
  markdown: string;
  token_estimate: number;
  memory_ids: string[];
  experience_ids: string[];
  insight_ids: string[];
  ghap_id: string | null;
  /** True when an item was left out for the budget. */
  truncated: boolean;
}

export const GHAP_HEADING = "## Your current working hypothesis (GHAP)";
export const MEMORIES_HEADING = "## What Psyche remembers that may bear on this";
export const EXPERIENCES_HEADING = "## Past experience: hypotheses tested before";
export const INSIGHTS_HEADING = "## Psyche's recent insights";
/** Insights from this many hours back count as recent. */
const INSIGHT_HOURS = 7 * 24;
const INSIGHT_LIMIT = 5;
const INSIGHT_MIN_IMPORTANCE = 0.3;
const EXPERIENCE_TAG = "ghap";

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

const day = (d: Date): string => d.toISOString().slice(0, 10);
const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();
const line = (m: MemoryRow): string => `- ${oneLine(m.content)} (${m.kind}, ${day(m.created_at)}, id ${m.id})`;
const ghapLines = (g: GhapRow): string[] => [
  `- goal: ${oneLine(g.goal)}`,
  `- hypothesis: ${oneLine(g.hypothesis)}`,
  `- action: ${oneLine(g.action)}`,
  `- prediction: ${oneLine(g.prediction)} (GHAP ${g.id}, set ${day(g.created_at)})`,
];

export async function assembleContext(memory: Memory, o: AssembleOptions): Promise<AssembledContext> {
  const types = new Set(o.types ?? CONTEXT_TYPES);
  const wantRecall = types.has("memories") || types.has("experiences") || types.has("insights");
  const [found, insights] = await Promise.all([
    // Dreams are not memories of the world (memory/recall.ts).
    wantRecall && o.query.trim() ? memory.recall(o.query, o.limit, { signal: o.signal, scopes: o.scopes }) : Promise.resolve([]),
    types.has("insights")
      ? memory.recentInsights(INSIGHT_MIN_IMPORTANCE, INSIGHT_HOURS, INSIGHT_LIMIT, ["insight"], o.scopes)
      : Promise.resolve([]),
  ]);
  const recalled = found.map((r) => r.memory);
  const isExperience = (m: MemoryRow) => m.tags.includes(EXPERIENCE_TAG);
  const memories = types.has("memories") ? recalled.filter((m) => m.kind !== "insight" && !isExperience(m)) : [];
  const experiences = types.has("experiences") ? recalled.filter(isExperience) : [];
  const relevantInsights = types.has("insights") ? recalled.filter((m) => m.kind === "insight" && !isExperience(m)) : [];
  const seen = new Set(relevantInsights.map((m) => m.id));
  const allInsights = [...relevantInsights, ...insights.filter((m) => !seen.has(m.id))];

  let used = 0;
  let truncated = false;
  const section = <T>(heading: string, rows: readonly T[], render: (row: T) => string): { text: string; taken: T[] } => {
    const lines: string[] = [];
    const taken: T[] = [];
    for (const row of rows) {
      const item = render(row);
      // A section's heading (and the blank line before it) is paid for by its first item.
      const cost = estimateTokens(`${item}\n`) + (lines.length === 0 ? estimateTokens(`${heading}\n\n`) : 0);
      if (used + cost > o.maxTokens) {
        truncated = true;
        continue;
      }
      used += cost;
      lines.push(item);
      taken.push(row);
    }
    return { text: lines.length ? `${heading}\n${lines.join("\n")}` : "", taken };
  };
  // The active GHAP first: it is what the agent is doing now.
  const ghap = section(GHAP_HEADING, types.has("active_ghap") && o.activeGhap ? [o.activeGhap] : [], (g) => ghapLines(g).join("\n"));
  const mem = section(MEMORIES_HEADING, memories, line);
  const exp = section(EXPERIENCES_HEADING, experiences, line);
  const ins = section(INSIGHTS_HEADING, allInsights, line);
  const markdown = [ghap.text, mem.text, exp.text, ins.text].filter(Boolean).join("\n\n");
  const ids = (rows: MemoryRow[]) => rows.map((m) => m.id);
  return {
    markdown,
    token_estimate: estimateTokens(markdown),
    memory_ids: ids(mem.taken),
    experience_ids: ids(exp.taken),
    insight_ids: ids(ins.taken),
    ghap_id: ghap.taken[0]?.id ?? null,
    truncated,
  };
}

// What each kind of reverie is asked: a dream wanders, an idle thought turns over a quiet
// conversation, a reflection draws insights from numbered statements (Generative Agents).
import type { PromptMessage } from "../inference/engine.js";

export interface Seed {
  id: string;
  content: string;
}

/** Seeds are cut short: a reverie still reading its prompt wakes late (docs/benchmarks.md, the wake benchmark). */
const line = (s: Seed, chars: number) => s.content.replace(/\s+/g, " ").trim().slice(0, chars);

export function dreamPrompt(seeds: readonly Seed[], focus: string | null | undefined): PromptMessage[] {
  const memories = seeds.map((s) => `- ${line(s, 120)}`).join("\n");
  return [
    {
      role: "system",
      content:
        "This is your private time to reflect. Nobody is listening. Let your mind wander over what you remember, notice patterns, and say what you come to think.",
    },
    { role: "user", content: `${focus ? `Dwell on: ${focus}\n` : ""}Memories that surface:\n${memories || "- (nothing yet)"}` },
  ];
}

export function idleThoughtPrompt(seeds: readonly Seed[]): PromptMessage[] {
  return [
    {
      role: "system",
      content:
        "The conversation has gone quiet for a moment. In a sentence or two, think about what was said: what you noticed, what you wonder.",
    },
    { role: "user", content: `What was said:\n${seeds.map((s) => `- ${line(s, 160)}`).join("\n") || "- (nothing yet)"}` },
  ];
}

export function reflectionPrompt(seeds: readonly Seed[], focus: string | null | undefined): PromptMessage[] {
  const statements = seeds.map((s, i) => `${i + 1}. ${line(s, 160)}`).join("\n");
  return [
    { role: "system", content: "You are reflecting on your own memories to understand them better." },
    {
      role: "user",
      content: `Statements${focus ? ` about ${focus}` : ""}:\n${statements}\nWhat high-level insights can you infer from the above statements? Write each on its own line, as: insight (because of 1, 3)`,
    },
  ];
}

/**
 * The seeds an insight cites: those its "(because of 1, 5)" clauses name, or every seed when
 * it names none (a small model rarely keeps the format).
 */
export function citedSeeds(text: string, seeds: readonly Seed[]): string[] {
  const cited = new Set<string>();
  for (const m of text.matchAll(/because of ([\d,\s]+(?:and\s*\d+)?)/gi)) {
    for (const n of m[1]!.match(/\d+/g) ?? []) {
      const seed = seeds[Number(n) - 1];
      if (seed) cited.add(seed.id);
    }
  }
  return cited.size ? [...cited] : seeds.map((s) => s.id);
}

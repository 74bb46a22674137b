// A dream: an isolated generation on its own context sequence, seeded with memories, written
// to the dream journal as it ends, finished or interrupted. A chat wakes it: the worker aborts
// it at the next token, and what it had dreamt so far is kept.
import { randomUUID } from "node:crypto";
import type { Pool } from "../db/pool.js";
import { dreamSeeds, endDream, startDream } from "../db/sql/dreams.js";
import type { InferenceEngine } from "../inference/engine.js";
import type { DreamJob } from "../jobs/queue.js";
import type { Logger } from "../log.js";
import type { Memory } from "../memory/memory.js";
import type { MoodKeeper } from "../mood/mood-keeper.js";

/** The payload of the jobs signal for a queued dream (which must not wake a running one). */
export const DREAM_SIGNAL = "dream";

/** The reason a dream's signal is aborted when it reaches its time budget: it ends as done. */
export class DreamTimeUp extends Error {
  override name = "DreamTimeUp";
}

/** The reason a dream's signal is aborted when a chat arrives. */
export class Wake extends Error {
  override name = "Wake";
  readonly at = performance.now();
}

export interface DreamDeps {
  pool: Pool;
  engine: InferenceEngine;
  log: Logger;
  memory?: Memory | undefined;
  mood?: MoodKeeper | undefined;
}

/** Below this significance a dream stays in the journal only (seed 003's threshold). */
export const DREAM_MEMORY_THRESHOLD = 0.3;

export function dreamPrompt(seeds: readonly { content: string }[], focus: string | null | undefined) {
  const memories = seeds.map((s) => `- ${s.content.replace(/\s+/g, " ").slice(0, 300)}`).join("\n");
  return [
    {
      role: "system" as const,
      content:
        "This is your private time to reflect. Nobody is listening. Let your mind wander over what you remember, notice patterns, and say what you come to think.",
    },
    { role: "user" as const, content: `${focus ? `Dwell on: ${focus}\n` : ""}Memories that surface:\n${memories || "- (nothing yet)"}` },
  ];
}

export async function runDream(deps: DreamDeps, jobId: string, job: DreamJob, signal: AbortSignal): Promise<{ journalId: string; status: "done" | "interrupted" }> {
  const journalId = randomUUID();
  const seeds = await dreamSeeds(deps.pool, 3);
  await startDream(deps.pool, { id: journalId, jobId, focus: job.focus ?? null, seedMemoryIds: seeds.map((s) => s.id), model: deps.engine.modelName });
  let result;
  try {
    result = await deps.engine.generate({ messages: dreamPrompt(seeds, job.focus), maxTokens: job.maxTokens, temperature: 1.2, sequence: "dream", signal });
  } catch (err) {
    await endDream(deps.pool, journalId, { status: "failed", content: "", tokens: 0, significance: null, valence: null, arousal: null, wakeLatencyMs: null, error: (err as Error).message });
    throw err;
  }
  const woken = signal.aborted && signal.reason instanceof Wake;
  const wakeLatencyMs = woken ? performance.now() - (signal.reason as Wake).at : null;
  const status = signal.aborted && !(signal.reason instanceof DreamTimeUp) ? "interrupted" : "done";
  // Significance and affect in the scoring thread; a significant dream becomes a memory.
  const scored = deps.memory && result.text.trim() ? await deps.memory.score(result.text) : undefined;
  await endDream(deps.pool, journalId, {
    status,
    content: result.text,
    tokens: result.completionTokens,
    significance: scored?.importance ?? null,
    valence: scored?.valence ?? null,
    arousal: scored?.arousal ?? null,
    wakeLatencyMs,
  });
  if (scored && deps.memory && scored.importance >= DREAM_MEMORY_THRESHOLD) {
    await deps.memory.remember({ kind: "dream", content: result.text, importance: scored.importance, sourceKind: "dream", sourceId: journalId, citations: seeds.map((s) => s.id) });
  }
  if (scored && deps.mood) await deps.mood.react({ valence: scored.valence, arousal: scored.arousal }, "dream", journalId);
  deps.log.info({ journalId, status, tokens: result.completionTokens, wakeLatencyMs }, "dream ended");
  return { journalId, status };
}

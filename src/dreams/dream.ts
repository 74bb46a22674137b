// A dream: an isolated generation on its own context sequence, seeded with memories, written
// to the dream journal as it ends, finished or interrupted. A chat wakes it: the worker aborts
// it at the next token, and what it had dreamt so far is kept.
import { randomUUID } from "node:crypto";
import type { Pool } from "../db/pool.js";
import { dreamSeeds, endDream, scoreDream, startDream } from "../db/sql/dreams.js";
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
  const memories = seeds.map((s) => `- ${s.content.replace(/\s+/g, " ").slice(0, 120)}`).join("\n");
  return [
    {
      role: "system" as const,
      content:
        "This is your private time to reflect. Nobody is listening. Let your mind wander over what you remember, notice patterns, and say what you come to think.",
    },
    { role: "user" as const, content: `${focus ? `Dwell on: ${focus}\n` : ""}Memories that surface:\n${memories || "- (nothing yet)"}` },
  ];
}

export async function runDream(
  deps: DreamDeps,
  jobId: string,
  job: DreamJob,
  signal: AbortSignal,
): Promise<{ journalId: string; status: "done" | "interrupted"; afterwards: Promise<void> }> {
  const journalId = randomUUID();
  // Few, short seeds: a dream still reading its prompt wakes late (see the README's benchmark).
  const seeds = await dreamSeeds(deps.pool, 2);
  await startDream(deps.pool, { id: journalId, jobId, focus: job.focus ?? null, seedMemoryIds: seeds.map((s) => s.id), model: deps.engine.modelName });
  let result: { text: string; completionTokens: number };
  try {
    result = await deps.engine.generate({ messages: dreamPrompt(seeds, job.focus), maxTokens: job.maxTokens, temperature: 1.2, sequence: "dream", signal });
  } catch (err) {
    if (!signal.aborted) {
      await endDream(deps.pool, journalId, { status: "failed", content: "", tokens: 0, significance: null, valence: null, arousal: null, wakeLatencyMs: null, error: (err as Error).message });
      throw err;
    }
    // Woken (or out of time) while still reading its prompt: nothing dreamt yet, not a failure.
    result = { text: "", completionTokens: 0 };
  }
  const woken = signal.aborted && signal.reason instanceof Wake;
  const wakeLatencyMs = woken ? performance.now() - (signal.reason as Wake).at : null;
  const status = signal.aborted && !(signal.reason instanceof DreamTimeUp) ? "interrupted" : "done";
  await endDream(deps.pool, journalId, { status, content: result.text, tokens: result.completionTokens, significance: null, valence: null, arousal: null, wakeLatencyMs });
  deps.log.info({ journalId, status, tokens: result.completionTokens, wakeLatencyMs }, "dream ended");
  // What the dream meant is worked out after the worker has moved on: a chat that woke it
  // must not wait for scoring, embedding and the mood.
  const afterwards = reflectOnDream(deps, journalId, result.text, seeds).catch((err: unknown) => deps.log.warn({ err, journalId }, "scoring the dream failed"));
  return { journalId, status, afterwards };
}

/** Significance and affect (scoring thread) into the journal; a significant dream becomes a memory; the mood moves. */
async function reflectOnDream(deps: DreamDeps, journalId: string, text: string, seeds: readonly { id: string }[]): Promise<void> {
  if (!deps.memory || !text.trim()) return;
  const scored = await deps.memory.score(text);
  await scoreDream(deps.pool, journalId, scored);
  if (scored.importance >= DREAM_MEMORY_THRESHOLD) {
    await deps.memory.remember({ kind: "dream", content: text, importance: scored.importance, sourceKind: "dream", sourceId: journalId, citations: seeds.map((s) => s.id) });
  }
  if (deps.mood) await deps.mood.react({ valence: scored.valence, arousal: scored.arousal }, "dream", journalId);
}

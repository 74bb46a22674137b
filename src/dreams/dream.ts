// A reverie: a dream, an idle thought or a reflection. An isolated generation on the dream
// context sequence (no conversation, no client tools), seeded with memories, written to the
// dream journal as it ends, finished or interrupted. A chat wakes it: the worker aborts it at
// the next token, and what it had so far is kept.
import { randomUUID } from "node:crypto";
import type { Pool } from "../db/pool.js";
import {
  checkpointDream,
  conversationSeeds,
  dreamSeeds,
  endDream,
  reflectionSources,
  reverieScope,
  scoreDream,
  setDreamTopics,
  startDream,
} from "../db/sql/dreams.js";
import type { MemoryKind } from "../db/sql/memories.js";
import type { Generator, PromptMessage } from "../inference/engine.js";
import type { ReverieJob } from "../jobs/queue.js";
import type { Logger } from "../log.js";
import type { Memory } from "../memory/memory.js";
import { topicsOf } from "../memory/topics.js";
import type { MoodKeeper } from "../mood/mood-keeper.js";
import { citedSeeds, dreamPrompt, idleThoughtPrompt, reflectionPrompt, type Seed } from "./prompts.js";

/** The payload of the jobs signal for a queued reverie (which must not wake a running one). */
export const DREAM_SIGNAL = "dream";
/** The payload of POST /dream/wake's signal. */
export const WAKE_SIGNAL = "wake";
/** The payload of the signal that do-not-disturb changed. */
export const DND_SIGNAL = "dnd";

/** The reason a reverie's signal is aborted when it reaches its time budget: it ends as done. */
export class DreamTimeUp extends Error {
  override name = "DreamTimeUp";
}

/** The reason a reverie's signal is aborted when a chat arrives. */
export class Wake extends Error {
  override name = "Wake";
  readonly at = performance.now();
}

export interface DreamDeps {
  pool: Pool;
  /** The model, through the scheduler that owns its time (inference/scheduler.ts). */
  model: Generator;
  log: Logger;
  memory?: Memory | undefined;
  mood?: MoodKeeper | undefined;
  /** The inference worker running it (recorded, so a dead worker's entry can be closed). */
  workerId?: string | undefined;
  /** How often the text so far is saved (ms). Default CHECKPOINT_MS. */
  checkpointMs?: number | undefined;
}

/** Below this significance a dream or idle thought stays in the journal only: most reveries are noise, and memory bloat is what users of memory servers complain of most. */
export const DREAM_MEMORY_THRESHOLD = 0.3;

/** How often a running reverie's text so far is saved to its journal entry. */
export const CHECKPOINT_MS = 2000;

interface Plan {
  seeds: Seed[];
  messages: PromptMessage[];
  temperature: number;
  focus: string | null;
  /** What a result becomes, given its significance; null: the journal only. */
  keepAs: (significance: number) => MemoryKind | null;
  /** The memories a result cites. */
  cites: (text: string) => string[];
  /** The one scope it draws on, and keeps its result in (src/scope.ts). */
  scope: string;
}

async function plan(deps: DreamDeps, job: ReverieJob): Promise<Plan> {
  const scope = job.scope ?? (await reverieScope(deps.pool, job.kind === "idle" ? (job.conversationId ?? null) : null));
  return { ...(await planIn(deps, job, scope)), scope };
}

async function planIn(deps: DreamDeps, job: ReverieJob, scope: string): Promise<Omit<Plan, "scope">> {
  const all = (seeds: Seed[]) => () => seeds.map((s) => s.id);
  // One scope at a time: a project's dream turns over that project's memories only.
  const own = [scope];
  switch (job.kind) {
    case "dream": {
      const found =
        job.focus && deps.memory ? (await deps.memory.search(job.focus, 2, undefined, { scopes: own })).map((r) => r.memory) : [];
      const seeds = dedupe([...found, ...(await dreamSeeds(deps.pool, 2, scope))]);
      const keepAs = (s: number): MemoryKind | null => (s >= DREAM_MEMORY_THRESHOLD ? "dream" : null);
      return {
        seeds,
        messages: dreamPrompt(seeds, job.focus),
        temperature: job.temperature ?? 1.2,
        focus: job.focus ?? null,
        keepAs,
        cites: all(seeds),
      };
    }
    case "idle": {
      const seeds = job.conversationId ? await conversationSeeds(deps.pool, job.conversationId, 3) : await dreamSeeds(deps.pool, 1, scope);
      const keepAs = (s: number): MemoryKind | null => (s >= DREAM_MEMORY_THRESHOLD ? "insight" : null);
      const focus = job.conversationId ? `conversation ${job.conversationId}` : null;
      return { seeds, messages: idleThoughtPrompt(seeds), temperature: job.temperature ?? 0.9, focus, keepAs, cites: all(seeds) };
    }
    case "reflect": {
      const seeds =
        job.focus && deps.memory
          ? (await deps.memory.recall(job.focus, 8, { scopes: own })).map((r) => r.memory)
          : await reflectionSources(deps.pool, 8, scope);
      // A reflection is deliberate: what it concludes is kept, cited, whatever its score.
      return {
        seeds,
        messages: reflectionPrompt(seeds, job.focus),
        temperature: job.temperature ?? 0.7,
        focus: job.focus ?? null,
        keepAs: () => "insight",
        cites: (text) => citedSeeds(text, seeds),
      };
    }
  }
}

const dedupe = (seeds: Seed[]) => [...new Map(seeds.map((s) => [s.id, { id: s.id, content: s.content }])).values()];

export async function runDream(
  deps: DreamDeps,
  jobId: string,
  job: ReverieJob,
  signal: AbortSignal,
): Promise<{ journalId: string; status: "done" | "interrupted"; afterwards: Promise<void> }> {
  const journalId = randomUUID();
  const p = await plan(deps, job);
  // What it starts from says what it is about while it runs (/dream/status, the events).
  const seedTexts = [...(p.focus ? [p.focus] : []), ...p.seeds.map((s) => s.content)];
  await startDream(deps.pool, {
    topics: await topicsOf(deps.pool, seedTexts),
    id: journalId,
    kind: job.kind,
    jobId,
    focus: p.focus,
    seedMemoryIds: p.seeds.map((s) => s.id),
    model: deps.model.modelName,
    workerId: deps.workerId,
    scope: p.scope,
  });
  let result: { text: string; completionTokens: number };
  // Every few seconds the text so far goes to the journal entry.
  let partial = "";
  let partialTokens = 0;
  let saved = 0;
  const checkpoint = setInterval(() => {
    if (partial.length === saved) return;
    saved = partial.length;
    checkpointDream(deps.pool, journalId, partial, partialTokens).catch((err: unknown) =>
      deps.log.debug({ err, journalId }, "dream checkpoint not written"),
    );
  }, deps.checkpointMs ?? CHECKPOINT_MS);
  try {
    // A reflection with nothing to reflect on ends at once, as done.
    result =
      job.kind === "reflect" && p.seeds.length === 0
        ? { text: "", completionTokens: 0 }
        : await deps.model.generate({
            messages: p.messages,
            maxTokens: job.maxTokens,
            temperature: p.temperature,
            sequence: "dream",
            signal,
            onText: (text, tokens) => {
              partial += text;
              partialTokens += tokens;
            },
          });
  } catch (err) {
    if (!signal.aborted) {
      await endDream(deps.pool, journalId, {
        status: "failed",
        content: partial,
        tokens: partialTokens,
        significance: null,
        valence: null,
        arousal: null,
        error: (err as Error).message,
      });
      throw err;
    }
    // Woken (or out of time) while still reading its prompt: nothing yet, not a failure.
    result = { text: "", completionTokens: 0 };
  } finally {
    clearInterval(checkpoint);
  }
  const stoppedAt = performance.now();
  const woken = signal.aborted && signal.reason instanceof Wake;
  const status = signal.aborted && !(signal.reason instanceof DreamTimeUp) ? "interrupted" : "done";
  await endDream(
    deps.pool,
    journalId,
    { status, content: result.text, tokens: result.completionTokens, significance: null, valence: null, arousal: null },
    woken ? performance.now() - stoppedAt : null,
  );
  deps.log.info(
    {
      journalId,
      kind: job.kind,
      status,
      tokens: result.completionTokens,
      noticedWakeMs: woken ? stoppedAt - (signal.reason as Wake).at : null,
    },
    "reverie ended",
  );
  // What it meant is worked out after the worker has moved on: a chat that woke it must not
  // wait for scoring, embedding and the mood.
  const afterwards = reflectOn(deps, journalId, result.text, p).catch((err: unknown) =>
    deps.log.warn({ err, journalId }, "scoring the reverie failed"),
  );
  return { journalId, status, afterwards };
}

/** Significance and affect (scoring thread) into the journal; a kept result becomes a memory; the mood moves. */
async function reflectOn(deps: DreamDeps, journalId: string, text: string, p: Plan): Promise<void> {
  if (!deps.memory) return;
  // A reverie that said nothing (woken while reading its prompt, or a reflection with no seeds)
  // still finishes: significance 0 and no affect, so its "reverie.finished" event comes like
  // every other's (migrations/000013_events.sql) and the mood is left alone.
  if (!text.trim()) return scoreDream(deps.pool, journalId, { importance: 0, valence: null, arousal: null });
  // Once it has ended: what its text and its seeds say, its own words first among equals.
  await setDreamTopics(deps.pool, journalId, await topicsOf(deps.pool, [text, ...p.seeds.map((s) => s.content)]));
  const scored = await deps.memory.score(text);
  const kind = p.keepAs(scored.importance);
  if (kind)
    await deps.memory.remember({
      kind,
      content: text.trim(),
      importance: scored.importance,
      sourceKind: "dream",
      sourceId: journalId,
      citations: p.cites(text),
      scope: p.scope,
    });
  // After the memory, so that the journal's "reverie.finished" event can say whether it became one (migrations/000013_events.sql).
  await scoreDream(deps.pool, journalId, scored);
  if (deps.mood) await deps.mood.react({ valence: scored.valence, arousal: scored.arousal }, "dream", journalId);
}

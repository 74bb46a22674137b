// A reverie: a dream, an idle thought or a reflection. An isolated generation on the dream
// context sequence (no conversation, no client tools), seeded with memories, written to the
// dream journal as it ends, finished or interrupted. A chat wakes it: the worker aborts it at
// the next token, and what it had so far is kept. A woken dream or reflection is paused, not
// ended: the next reverie of its kind asked for without a focus continues it in the same entry
// (its seeds and focus, its text so far as the reply's start), until it ends as done. One that
// can no longer continue (its memories deleted, another model) ends with a note instead.
import { randomUUID } from "node:crypto";
import type { Pool } from "../db/pool.js";
import {
  checkpointDream,
  conversationSeeds,
  dreamSeeds,
  endDream,
  type JournalKind,
  liveSeeds,
  reflectionSources,
  resumeDream,
  type ResumedDream,
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

/** The reason a reverie's signal is aborted when its share of the model's time is spent (dreams/scheduler.ts): it pauses. */
export class ShareSpent extends Error {
  override name = "ShareSpent";
}

/** The kinds a pause keeps for later; a woken idle thought ends (its moment has passed). */
const RESUMABLE: ReadonlySet<JournalKind> = new Set(["dream", "reflect"]);

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
  // One scope at a time: a project's dream turns over that project's memories only.
  const own = [scope];
  switch (job.kind) {
    case "dream": {
      const found =
        job.focus && deps.memory ? (await deps.memory.search(job.focus, 2, undefined, { scopes: own })).map((r) => r.memory) : [];
      return shape(job, dedupe([...found, ...(await dreamSeeds(deps.pool, 2, scope))]), job.focus ?? null);
    }
    case "idle": {
      const seeds = job.conversationId ? await conversationSeeds(deps.pool, job.conversationId, 3) : await dreamSeeds(deps.pool, 1, scope);
      return shape(job, seeds, job.conversationId ? `conversation ${job.conversationId}` : null);
    }
    case "reflect": {
      const seeds =
        job.focus && deps.memory
          ? (await deps.memory.recall(job.focus, 8, { scopes: own })).map((r) => r.memory)
          : await reflectionSources(deps.pool, 8, scope);
      return shape(job, seeds, job.focus ?? null);
    }
  }
}

/** A reverie's prompt and what becomes of its result, from its seeds and focus (a resumed one's are its entry's). */
function shape(job: ReverieJob, seeds: Seed[], focus: string | null): Omit<Plan, "scope"> {
  const all = () => seeds.map((s) => s.id);
  switch (job.kind) {
    case "dream":
      return {
        seeds,
        messages: dreamPrompt(seeds, focus),
        temperature: job.temperature ?? 1.2,
        focus,
        keepAs: (s) => (s >= DREAM_MEMORY_THRESHOLD ? "dream" : null),
        cites: all,
      };
    case "idle":
      return {
        seeds,
        messages: idleThoughtPrompt(seeds),
        temperature: job.temperature ?? 0.9,
        focus,
        keepAs: (s) => (s >= DREAM_MEMORY_THRESHOLD ? "insight" : null),
        cites: all,
      };
    case "reflect":
      // A reflection is deliberate: what it concludes is kept, cited, whatever its score.
      return {
        seeds,
        messages: reflectionPrompt(seeds, focus),
        temperature: job.temperature ?? 0.7,
        focus,
        keepAs: () => "insight",
        cites: (text) => citedSeeds(text, seeds),
      };
  }
}

const dedupe = (seeds: Seed[]) => [...new Map(seeds.map((s) => [s.id, { id: s.id, content: s.content }])).values()];

/** A reverie under way: its entry, its plan, and what a paused entry had before this stretch. */
interface Begun {
  journalId: string;
  plan: Plan;
  prior: { text: string; tokens: number; seconds: number; resumes: number };
}

/** Continues the oldest paused entry of the job's kind, when it may; otherwise starts a new one. */
async function begin(deps: DreamDeps, jobId: string, job: ReverieJob): Promise<Begun> {
  // A job with a focus asks for that reverie; one without continues what a chat interrupted.
  while (RESUMABLE.has(job.kind) && !("focus" in job && job.focus)) {
    const entry = await resumeDream(deps.pool, { kind: job.kind, scope: job.scope ?? null, jobId, workerId: deps.workerId });
    if (!entry) break;
    const resumed = await resumable(deps, job, entry);
    if (resumed) return resumed;
  }
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
  return { journalId, plan: p, prior: { text: "", tokens: 0, seconds: 0, resumes: 0 } };
}

/** A paused entry's plan, or undefined once it is closed with a note because it cannot go on. */
async function resumable(deps: DreamDeps, job: ReverieJob, entry: ResumedDream): Promise<Begun | undefined> {
  const seeds = await liveSeeds(deps.pool, entry.seed_memory_ids);
  const note =
    entry.model !== deps.model.modelName
      ? `not continued: it began on ${entry.model}, and the model is now ${deps.model.modelName}`
      : seeds.length < entry.seed_memory_ids.length
        ? `not continued: ${entry.seed_memory_ids.length - seeds.length} of the memories it began from were deleted`
        : undefined;
  if (note === undefined)
    return {
      journalId: entry.id,
      plan: { ...shape(job, seeds, entry.focus), scope: entry.scope },
      prior: { text: entry.content, tokens: entry.tokens, seconds: entry.dreamt_seconds, resumes: entry.resumes },
    };
  // It ends as it stands, kept in the journal and never a memory; its end is scored as empty so
  // that its "reverie.finished" event comes like every other's.
  await endDream(deps.pool, entry.id, {
    status: "interrupted",
    content: entry.content,
    tokens: entry.tokens,
    significance: null,
    valence: null,
    arousal: null,
    note,
  });
  await scoreDream(deps.pool, entry.id, { importance: 0, valence: null, arousal: null });
  deps.log.info({ journalId: entry.id, kind: entry.kind }, `a paused reverie ${note}`);
  return undefined;
}

export interface DreamEnd {
  journalId: string;
  status: "done" | "paused" | "interrupted";
  /** Its scoring, memories and mood, after the worker has moved on. */
  afterwards: Promise<void>;
}

/**
 * Runs a reverie until it ends, is woken, or its time is up. `clock` is told, once the entry is
 * known and before the model reads anything, how many seconds of the model's time the entry has
 * already had (a resumed one's earlier stretches): its time limit counts them.
 */
export async function runDream(
  deps: DreamDeps,
  jobId: string,
  job: ReverieJob,
  signal: AbortSignal,
  clock?: (dreamtSeconds: number) => void,
): Promise<DreamEnd> {
  const { journalId, plan: p, prior } = await begin(deps, jobId, job);
  clock?.(prior.seconds);
  let result: { text: string; completionTokens: number };
  // Every few seconds the text so far goes to the journal entry.
  let partial = prior.text;
  let partialTokens = prior.tokens;
  let saved = partial.length;
  const checkpoint = setInterval(() => {
    if (partial.length === saved) return;
    saved = partial.length;
    checkpointDream(deps.pool, journalId, partial, partialTokens).catch((err: unknown) =>
      deps.log.debug({ err, journalId }, "dream checkpoint not written"),
    );
  }, deps.checkpointMs ?? CHECKPOINT_MS);
  // The token budget is the whole entry's, across its stretches.
  const maxTokens = job.maxTokens - prior.tokens;
  try {
    // A reflection with nothing to reflect on ends at once, as done; so does an entry that has had its tokens.
    result =
      (job.kind === "reflect" && p.seeds.length === 0) || maxTokens <= 0
        ? { text: "", completionTokens: 0 }
        : await deps.model.generate({
            messages: p.messages,
            ...(prior.text ? { partialResponse: prior.text } : {}),
            maxTokens,
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
  const status = !signal.aborted || signal.reason instanceof DreamTimeUp ? "done" : RESUMABLE.has(job.kind) ? "paused" : "interrupted";
  const whole = { text: prior.text + result.text, tokens: prior.tokens + result.completionTokens };
  await endDream(
    deps.pool,
    journalId,
    { status, content: whole.text, tokens: whole.tokens, significance: null, valence: null, arousal: null },
    woken ? performance.now() - stoppedAt : null,
  );
  deps.log.info(
    {
      journalId,
      kind: job.kind,
      status,
      tokens: whole.tokens,
      resumes: prior.resumes,
      noticedWakeMs: woken ? stoppedAt - (signal.reason as Wake).at : null,
    },
    status === "paused" ? "reverie paused, to be continued" : "reverie ended",
  );
  // What it meant is worked out after the worker has moved on: a chat that woke it must not
  // wait for scoring, embedding and the mood. A paused one means nothing yet.
  const afterwards =
    status === "paused"
      ? Promise.resolve()
      : reflectOn(deps, journalId, whole.text, p).catch((err: unknown) => deps.log.warn({ err, journalId }, "scoring the reverie failed"));
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

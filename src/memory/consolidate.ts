// Consolidation (maintenance priority, no model): near-duplicate memories that say the same
// thing (memory/same-thing.ts) are folded into one,
// the survivor keeping the higher importance, the citations and a count of what it absorbed.
// Each run is a journal entry of kind `consolidate`.
import { randomUUID } from "node:crypto";
import { inTransaction, type Pool } from "../db/pool.js";
import { foldMemory, lastConsolidation, nearDuplicates, survivorOf } from "../db/sql/consolidation.js";
import { endDream, setDreamSeeds, setDreamTopics, startDream } from "../db/sql/dreams.js";
import { topicsOf } from "./topics.js";
import type { Logger } from "../log.js";
import { getMemory } from "../db/sql/memories.js";
import { recordVersion } from "../db/sql/memory-versions.js";
import type { Memory } from "./memory.js";
import { saySameThing } from "./same-thing.js";
import { AdvisoryLock, lockForTransaction } from "../db/sql/locks.js";
/** Memories looked at per run. */
const PER_RUN = 2000;

export interface ConsolidationDeps {
  pool: Pool;
  memory: Memory;
  log: Logger;
}

export interface Consolidated {
  journalId: string;
  folded: number;
}

/**
 * Folds near-duplicates among memories created since the last finished consolidation (all of
 * them with `everything`). Idempotent: a retried run finds what is left.
 */
export async function consolidate(
  deps: ConsolidationDeps,
  opts: {
    similarity: number;
    everything: boolean;
    jobId: string | null;
    signal?: AbortSignal;
    /** The inference worker of this process: its heartbeat says whether the entry is still being written (src/jobs/reclaim.ts). */
    workerId?: string | undefined;
  },
): Promise<Consolidated> {
  const journalId = randomUUID();
  const since = opts.everything ? null : await lastConsolidation(deps.pool);
  await startDream(deps.pool, {
    id: journalId,
    kind: "consolidate",
    jobId: opts.jobId,
    focus: null,
    seedMemoryIds: [],
    model: deps.memory.space.embedder,
    workerId: opts.workerId,
  });
  const folded: { keep: string; gone: string; similarity: number; content: string }[] = [];
  try {
    const pairs = await nearDuplicates(deps.pool, deps.memory.space, since, opts.similarity, PER_RUN);
    const touched = new Set<string>();
    for (const pair of pairs) {
      if (opts.signal?.aborted) break;
      if (touched.has(pair.id) || touched.has(pair.twin)) continue;
      const done = await inTransaction(deps.pool, async (client) => {
        await lockForTransaction(client, AdvisoryLock.memoryStore);
        const [a, b] = await Promise.all([getMemory(client, pair.id), getMemory(client, pair.twin)]);
        // Similar vectors are not enough: only memories that say the same thing become one.
        if (!a || !b || !saySameThing(a, b)) return undefined;
        const which = await survivorOf(client, pair.id, pair.twin);
        if (!which) return undefined;
        if (!(await foldMemory(client, which.keep, which.gone))) return undefined;
        // Both sides of the fold are in the histories: what the survivor absorbed, and where the other went.
        await recordVersion(client, which.keep, "consolidation", "folded", [which.gone]);
        await recordVersion(client, which.gone, "consolidation", "folded_into", [which.keep]);
        return { ...which, content: which.keep === a.id ? a.content : b.content };
      });
      // A pair left apart (they say different things) leaves both free to fold with another.
      if (done) {
        touched.add(pair.id).add(pair.twin);
        folded.push({ ...done, similarity: pair.similarity });
      }
    }
  } catch (err) {
    await endDream(deps.pool, journalId, {
      status: "failed",
      content: "",
      tokens: 0,
      significance: null,
      valence: null,
      arousal: null,
      error: (err as Error).message,
    });
    throw err;
  }
  const content = folded.length
    ? `Folded ${folded.length} near-duplicate ${folded.length === 1 ? "memory" : "memories"}:\n${folded.map((f) => `${f.gone} into ${f.keep} (similarity ${f.similarity.toFixed(3)})`).join("\n")}`
    : "Nothing to fold.";
  await setDreamSeeds(
    deps.pool,
    journalId,
    folded.map((f) => f.keep),
  );
  // What the memories it folded were about.
  await setDreamTopics(
    deps.pool,
    journalId,
    await topicsOf(
      deps.pool,
      folded.map((f) => f.content),
    ),
  );
  await endDream(deps.pool, journalId, { status: "done", content, tokens: 0, significance: null, valence: null, arousal: null });
  if (folded.length) deps.log.info({ journalId, folded: folded.length }, "consolidated memories");
  return { journalId, folded: folded.length };
}

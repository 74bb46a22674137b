// Retrieval quality on RealMem (bench/realmem.ts): each persona's turns are stored through the
// real Memory path in session order, formed on their session's date, and each query is answered
// from what came before it, as of its session's date (recency counts as it would have then), by
// Psyche's search (what GET /v1/memories/search runs) and by a BM25 baseline over the same
// turns in the same run (bench/bm25.ts). Evidence recall@k: the share of a query's evidence
// turns (or sessions) among the top k, averaged over queries.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../src/config.js";
import { loadConfig } from "../src/config.js";
import type { Logger } from "../src/log.js";
import { MAX_MEMORY_CHARS } from "../src/memory/memory.js";
import { tidyTextIndex } from "../src/db/sql/memory-terms.js";
import { bearsOn, type RecallFloor } from "../src/memory/ranking.js";
import { serve } from "../src/processes/serve.js";
import { Bm25Index } from "./bm25.js";
import { percentile } from "./memory.js";
import { loadPersona, personaFiles } from "./realmem.js";

const KS = [5, 10] as const;

interface Found {
  /** Per k: evidence turns found, evidence sessions found. */
  turns: Record<number, number>;
  sessions: Record<number, number>;
}

export interface QueryResult {
  persona: string;
  id: string;
  category: string;
  evidenceTurns: number;
  evidenceSessions: number;
  psyche: Found;
  /** The same search ranked by score alone (no conversation seats, memory/ranking.ts). */
  byScore: Found;
  bm25: Found;
  /** What a chat's prompt is offered: memories, and evidence turns among them; without and with the floor. */
  prompt: PromptOffer;
  promptFloored: PromptOffer;
  psycheTop: string[];
  bm25Top: string[];
}

interface PromptOffer {
  memories: number;
  evidenceTurns: number;
}

/** What recall offers a chat's prompt before its token budget (memory/recall.ts). */
const PROMPT_MEMORIES = 8;

export interface Recall {
  queries: number;
  turn5: number;
  turn10: number;
  session5: number;
  session10: number;
}

export interface RetrievalResult {
  date: string;
  personas: number;
  turnsStored: number;
  memoriesKept: number;
  queries: number;
  /** Queries with at least one evidence turn found in the dialogue (the turn-level figures use these). */
  queriesWithTurnEvidence: number;
  psyche: Recall;
  byScore: Recall;
  bm25: Recall;
  byCategory: Record<string, { psyche: Recall; bm25: Recall }>;
  searchMs: { p50: number; p95: number };
  storeSeconds: number;
  /**
   * A chat's prompt (memory/recall.ts): the memories offered and the share of evidence turns
   * among them, averaged over queries, without and with the floor (--recall-min-*).
   */
  prompt?: { floor: RecallFloor; all: PromptSummary; floored: PromptSummary };
}

export interface PromptSummary {
  memories: number;
  evidenceTurns: number;
}

export function promptSummary(rows: readonly QueryResult[], side: "prompt" | "promptFloored"): PromptSummary {
  const withTurns = rows.filter((r) => r.evidenceTurns > 0);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    memories: mean(rows.map((r) => r[side].memories)),
    evidenceTurns: mean(withTurns.map((r) => r[side].evidenceTurns / r.evidenceTurns)),
  };
}

function found(top: readonly string[], evidenceTurns: readonly string[], evidenceSessions: readonly string[]): Found {
  const f: Found = { turns: {}, sessions: {} };
  for (const k of KS) {
    const keys = new Set(top.slice(0, k));
    const sessions = new Set([...keys].map((key) => key.split("#")[0]));
    f.turns[k] = evidenceTurns.filter((t) => keys.has(t)).length;
    f.sessions[k] = evidenceSessions.filter((s) => sessions.has(s)).length;
  }
  return f;
}

export function summarise(rows: readonly QueryResult[], side: "psyche" | "byScore" | "bm25"): Recall {
  const withTurns = rows.filter((r) => r.evidenceTurns > 0);
  const withSessions = rows.filter((r) => r.evidenceSessions > 0);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    queries: rows.length,
    turn5: mean(withTurns.map((r) => r[side].turns[5]! / r.evidenceTurns)),
    turn10: mean(withTurns.map((r) => r[side].turns[10]! / r.evidenceTurns)),
    session5: mean(withSessions.map((r) => r[side].sessions[5]! / r.evidenceSessions)),
    session10: mean(withSessions.map((r) => r[side].sessions[10]! / r.evidenceSessions)),
  };
}

export async function benchRetrieval(
  base: Config,
  log: Logger,
  datasetDir: string,
  resultsDir: string,
  limit = Infinity,
): Promise<RetrievalResult> {
  const dataDir = join(base.dataDir, "retrieval");
  const config = loadConfig(
    { ...base, dataDir, embeddingModel: "builtin", recallPromptTokens: 0, dreamDelaySeconds: 0, consolidation: false },
    {},
  );
  const psyche = await serve(config, log);
  const floor: RecallFloor = { share: config.recallMinShare, coverage: config.recallMinCoverage };
  const rows: QueryResult[] = [];
  const searchTimes: number[] = [];
  let turnsStored = 0;
  let memoriesKept = 0;
  let storeMs = 0;
  try {
    for (const file of personaFiles(datasetDir).slice(0, limit)) {
      const persona = loadPersona(file);
      // Each persona is a Psyche of its own.
      await psyche.db.pool.query("delete from memories");
      await tidyTextIndex(psyche.db.pool);
      const bm25 = new Bm25Index();
      const bm25Keys: string[] = [];
      const keysOf = new Map<string, string[]>();
      process.stderr.write(`  ${persona.name}: ${persona.steps.length} steps\n`);
      for (const step of persona.steps) {
        if (step.kind === "turn") {
          const content = step.turn.content.slice(0, MAX_MEMORY_CHARS).trim();
          if (!content) continue;
          const t = performance.now();
          const kept = await psyche.mem.memory.remember({
            kind: "episodic",
            content,
            sourceKind: "api",
            sourceId: step.turn.key,
            conversationId: step.turn.session,
            formedAt: step.turn.at,
          });
          storeMs += performance.now() - t;
          turnsStored++;
          const keys = keysOf.get(kept.memory.id);
          if (keys) keys.push(step.turn.key);
          else keysOf.set(kept.memory.id, [step.turn.key]);
          bm25Keys[bm25.add(content)] = step.turn.key;
          continue;
        }
        const q = step.query;
        const t = performance.now();
        // Asked in a chat, in its session: the transcript holds that session's turns, and
        // recall looks past them (memory/recall.ts); the baseline does the same. Asked on its
        // session's date, of memories formed on theirs: recency counts as it would have then.
        const own = { exceptConversation: q.session, asOf: q.at };
        const ranked = await psyche.mem.memory.search(q.text, 10, undefined, own);
        searchTimes.push(performance.now() - t);
        const byScore = await psyche.mem.memory.search(q.text, 10, undefined, { ...own, conversationSeats: 0 });
        const psycheTop = ranked.flatMap((r) => keysOf.get(r.memory.id) ?? []);
        // What a chat's prompt is offered (memory/recall.ts): the best 8, and those of them that
        // reach the floor; bearsOn applied here is what Memory.recall does with a floor.
        const offered = await psyche.mem.memory.recall(q.text, PROMPT_MEMORIES, own);
        const evidence = new Set(q.evidenceTurns);
        const prompt = (rs: typeof offered) => ({
          memories: rs.length,
          evidenceTurns: rs.filter((r) => (keysOf.get(r.memory.id) ?? []).some((k) => evidence.has(k))).length,
        });
        const bm25Top = bm25.search(q.text, 10, (d) => !bm25Keys[d]!.startsWith(`${q.session}#`)).map((d) => bm25Keys[d]!);
        rows.push({
          persona: persona.name,
          id: q.id,
          category: q.category,
          evidenceTurns: q.evidenceTurns.length,
          evidenceSessions: q.evidenceSessions.length,
          psyche: found(psycheTop, q.evidenceTurns, q.evidenceSessions),
          byScore: found(
            byScore.flatMap((r) => keysOf.get(r.memory.id) ?? []),
            q.evidenceTurns,
            q.evidenceSessions,
          ),
          bm25: found(bm25Top, q.evidenceTurns, q.evidenceSessions),
          prompt: prompt(offered),
          promptFloored: prompt(offered.filter((r) => bearsOn(r, floor))),
          psycheTop: psycheTop.slice(0, 10),
          bm25Top,
        });
      }
      memoriesKept += keysOf.size;
    }
  } finally {
    await psyche.stop();
  }
  writeFileSync(join(resultsDir, "retrieval-queries.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const categories = [...new Set(rows.map((r) => r.category))].sort();
  return {
    date: new Date().toISOString(),
    personas: new Set(rows.map((r) => r.persona)).size,
    turnsStored,
    memoriesKept,
    queries: rows.length,
    queriesWithTurnEvidence: rows.filter((r) => r.evidenceTurns > 0).length,
    psyche: summarise(rows, "psyche"),
    byScore: summarise(rows, "byScore"),
    bm25: summarise(rows, "bm25"),
    byCategory: Object.fromEntries(
      categories.map((c) => {
        const sub = rows.filter((r) => r.category === c);
        return [c, { psyche: summarise(sub, "psyche"), bm25: summarise(sub, "bm25") }];
      }),
    ),
    searchMs: { p50: percentile(searchTimes, 50), p95: percentile(searchTimes, 95) },
    storeSeconds: storeMs / 1000,
    prompt: { floor, all: promptSummary(rows, "prompt"), floored: promptSummary(rows, "promptFloored") },
  };
}

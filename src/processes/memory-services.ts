// The memory side of a process: embedding and scoring threads, the memory store and the mood.
// Built once per process and passed to the web and inference roles.
import type { Config } from "../config.js";
import { createEmbedder } from "../memory/create-embedder.js";
import type { Embedder } from "../memory/embedder.js";
import { Memory } from "../memory/memory.js";
import { ThreadScorer } from "../memory/scorer.js";
import { MoodKeeper } from "../mood/mood-keeper.js";
import type { DatabaseHandles } from "./connect.js";
import type { Shared } from "./stack.js";

export interface MemoryServices {
  embedder: Embedder;
  memory: Memory;
  mood: MoodKeeper;
}

export function moodSettings(config: Config) {
  return {
    baseline: { valence: config.moodBaselineValence, arousal: config.moodBaselineArousal },
    halfLifeMinutes: config.moodHalfLifeMinutes,
    sensitivity: config.moodSensitivity,
  };
}

export async function startMemoryServices(s: Shared, db: DatabaseHandles): Promise<MemoryServices> {
  const { config } = s;
  const embedder = await createEmbedder(config, s.log);
  s.stack.push("embedding threads", () => embedder.close());
  const scorer = new ThreadScorer(1);
  s.stack.push("scoring thread", () => scorer.close());
  const memory = new Memory({
    pool: db.pool,
    embedder,
    scorer,
    settings: {
      rank: {
        weights: {
          vector: config.recallWeightVector,
          conversation: config.recallWeightConversation,
          recency: config.recallWeightRecency,
          importance: config.recallWeightImportance,
        },
        recencyHalfLifeHours: config.recallHalfLifeHours,
        minSimilarity: config.recallMinSimilarity,
        conversationSeats: config.recallConversationSeats,
      },
      duplicateSimilarity: config.duplicateSimilarity,
    },
  });
  return { embedder, memory, mood: new MoodKeeper(db.pool, moodSettings(config)) };
}

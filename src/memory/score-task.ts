// The messages between the main thread and the scoring threads (workers/threads/score.ts).
import { z } from "zod";

export const ScoreTaskSchema = z.object({
  text: z.string(),
  toolCalls: z.number().int().min(0).default(0),
  maxSimilarity: z.number().min(-1).max(1).nullable().default(null),
});
export type ScoreTask = z.input<typeof ScoreTaskSchema>;

export interface ScoreResult {
  valence: number;
  arousal: number;
  importance: number;
}

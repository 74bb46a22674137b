// Affect and significance in a piscina thread (workers/threads/score.ts).
import { Piscina } from "piscina";
import type { ScoreResult, ScoreTask } from "./score-task.js";
import { threadFile } from "./thread-file.js";

export interface Scorer {
  score(task: ScoreTask): Promise<ScoreResult>;
  close(): Promise<void>;
}

export class ThreadScorer implements Scorer {
  private readonly pool: Piscina;

  constructor(threads: number) {
    this.pool = new Piscina({
      filename: threadFile("score").href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
  }

  score(task: ScoreTask): Promise<ScoreResult> {
    return this.pool.run(task) as Promise<ScoreResult>;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

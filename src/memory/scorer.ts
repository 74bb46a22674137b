// Affect and significance in a piscina thread (workers/threads/score.ts).
import type { ScoreResult, ScoreTask } from "./score-task.js";
import { ThreadPool } from "./thread-pool.js";

export interface Scorer {
  score(task: ScoreTask): Promise<ScoreResult>;
  close(): Promise<void>;
}

export class ThreadScorer implements Scorer {
  readonly threads: ThreadPool;

  constructor(threads: number) {
    this.threads = new ThreadPool("score", threads);
  }

  score(task: ScoreTask): Promise<ScoreResult> {
    return this.threads.pool.run(task) as Promise<ScoreResult>;
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}

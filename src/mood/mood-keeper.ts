// The mood in the database: every change a row in emotion_log, the current mood the last row
// decayed toward the baseline.
import { inTransaction, type Pool } from "../db/pool.js";
import { type MoodCause, type MoodRow, insertMood, latestMood, moodHistory } from "../db/sql/mood.js";
import type { Affect } from "./affect.js";
import { decayedMood, type MoodSettings, type MoodState, reactedMood } from "./mood.js";
import { AdvisoryLock, lockForTransaction } from "../db/sql/locks.js";

/** Serialises read-modify-write of the mood across processes. */

const stateOf = (row: MoodRow | undefined): MoodState | undefined =>
  row ? { valence: row.valence, arousal: row.arousal, at: row.at } : undefined;

export class MoodKeeper {
  constructor(
    private readonly pool: Pool,
    readonly settings: MoodSettings,
  ) {}

  async current(now = new Date()): Promise<Affect & { updatedAt: Date | null }> {
    const row = await latestMood(this.pool);
    return { ...decayedMood(stateOf(row), now, this.settings), updatedAt: row?.at ?? null };
  }

  history(limit: number): Promise<MoodRow[]> {
    return moodHistory(this.pool, limit);
  }

  /** Moves the mood toward `stimulus` and records it. */
  async react(stimulus: Affect, cause: MoodCause, sourceId: string | null): Promise<MoodRow> {
    return inTransaction(this.pool, async (client) => {
      await lockForTransaction(client, AdvisoryLock.mood);
      const mood = reactedMood(stateOf(await latestMood(client)), stimulus, new Date(), this.settings);
      return insertMood(client, { ...mood, cause, sourceId, stimulus });
    });
  }

  /**
   * Writes the mood's decay toward the baseline into the log (the maintenance schedule), so
   * SQL over emotion_log shows it settling; nothing when it has moved less than `minStep`.
   */
  async decay(minStep = 0.01, now = new Date()): Promise<MoodRow | undefined> {
    return inTransaction(this.pool, async (client) => {
      await lockForTransaction(client, AdvisoryLock.mood);
      const row = await latestMood(client);
      if (!row) return undefined;
      const mood = decayedMood(stateOf(row), now, this.settings);
      if (Math.abs(mood.valence - row.valence) < minStep && Math.abs(mood.arousal - row.arousal) < minStep) return undefined;
      return insertMood(client, { ...mood, cause: "decay", sourceId: null, stimulus: null });
    });
  }
}

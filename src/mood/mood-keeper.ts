// The mood in the database: every change a row in emotion_log, the current mood the last row
// decayed toward the baseline.
import { inTransaction, type Pool } from "../db/pool.js";
import { type EmotionCause, type EmotionRow, insertEmotion, latestEmotion, recentEmotions } from "../db/sql/emotion.js";
import type { Affect } from "./affect.js";
import { decayedMood, type MoodSettings, type MoodState, reactedMood } from "./mood.js";

/** Serialises read-modify-write of the mood across processes. */
const MOOD_LOCK = 7_415_003;

const stateOf = (row: EmotionRow | undefined): MoodState | undefined =>
  row ? { valence: row.valence, arousal: row.arousal, at: row.at } : undefined;

export class MoodKeeper {
  constructor(
    private readonly pool: Pool,
    readonly settings: MoodSettings,
  ) {}

  async current(now = new Date()): Promise<Affect & { updatedAt: Date | null }> {
    const row = await latestEmotion(this.pool);
    return { ...decayedMood(stateOf(row), now, this.settings), updatedAt: row?.at ?? null };
  }

  history(limit: number): Promise<EmotionRow[]> {
    return recentEmotions(this.pool, limit);
  }

  /** Moves the mood toward `stimulus` and records it. */
  async react(stimulus: Affect, cause: EmotionCause, sourceId: string | null): Promise<EmotionRow> {
    return inTransaction(this.pool, async (client) => {
      await client.query("select pg_advisory_xact_lock($1)", [MOOD_LOCK]);
      const mood = reactedMood(stateOf(await latestEmotion(client)), stimulus, new Date(), this.settings);
      return insertEmotion(client, { ...mood, cause, sourceId, stimulus });
    });
  }

  /**
   * Writes the mood's decay toward the baseline into the log (the maintenance schedule), so
   * SQL over emotion_log shows it settling; nothing when it has moved less than `minStep`.
   */
  async decay(minStep = 0.01, now = new Date()): Promise<EmotionRow | undefined> {
    return inTransaction(this.pool, async (client) => {
      await client.query("select pg_advisory_xact_lock($1)", [MOOD_LOCK]);
      const row = await latestEmotion(client);
      if (!row) return undefined;
      const mood = decayedMood(stateOf(row), now, this.settings);
      if (Math.abs(mood.valence - row.valence) < minStep && Math.abs(mood.arousal - row.arousal) < minStep) return undefined;
      return insertEmotion(client, { ...mood, cause: "decay", sourceId: null, stimulus: null });
    });
  }
}

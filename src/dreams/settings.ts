// The dream settings: defaults from the flags, overridden through PATCH /dream/config and kept
// in the database (dream_settings), so every process reads the same ones. Do-not-disturb lives
// in the same row.
import { z } from "zod";
import type { Config } from "../config.js";
import type { Queryable } from "../db/pool.js";
import { patchDreamOverrides, storedDreamSettings } from "../db/sql/dream-settings.js";

const seconds = z
  .number()
  .int()
  .min(0)
  .max(7 * 86_400);
const tokens = z.number().int().min(1).max(8192);

export const DreamSettingsSchema = z.strictObject({
  /** Self-started work at all: dreams, idle thoughts, reflection. */
  enabled: z.boolean(),
  /** Dream after this long without a request. */
  dream_delay_seconds: seconds.min(1),
  /** From the end of one self-started dream to the start of the next. */
  dream_cooldown_seconds: seconds,
  /** Nothing self-started within this long of any request. */
  wake_lock_seconds: seconds,
  dream_max_tokens: tokens,
  dream_max_seconds: seconds.min(1),
  dream_temperature: z.number().min(0).max(2),
  /**
   * The share of the model's time reveries may take over the window while someone is about (a
   * request within dream_delay_seconds, or a client present); 1: no bound. Asleep, a dream takes
   * what it needs.
   */
  dream_budget: z.number().min(0).max(1),
  dream_budget_window_seconds: seconds.min(1),
  /** Short reflections while a conversation is open (within dream_delay_seconds of a request) but quiet. */
  idle_thoughts: z.boolean(),
  idle_thought_delay_seconds: seconds.min(1),
  idle_thought_max_tokens: tokens,
  /** Reflect when the summed importance of memories since the last reflection passes this; 0: never by itself. */
  reflection_threshold: z.number().min(0).max(1000),
  reflection_max_tokens: tokens,
  /** Fold near-duplicate memories together on a schedule. */
  consolidation: z.boolean(),
  consolidation_interval_minutes: z.number().int().min(1).max(1440),
  /** Memories at least this similar are near-duplicates. */
  consolidation_similarity: z.number().min(0.5).max(1),
  /** The longest do-not-disturb POST /dream/dnd may ask for. */
  dnd_max_seconds: seconds.min(1),
});
export type DreamSettings = z.infer<typeof DreamSettingsSchema>;

/** A PATCH: any subset; null puts a setting back to its default. */
export const DreamSettingsPatchSchema = z
  .strictObject(
    Object.fromEntries(Object.entries(DreamSettingsSchema.shape).map(([k, v]) => [k, v.nullable().optional()])) as {
      [K in keyof DreamSettings]: z.ZodOptional<z.ZodNullable<(typeof DreamSettingsSchema.shape)[K]>>;
    },
  )
  .refine((p) => Object.keys(p).length > 0, { message: "give at least one setting to change" });
export type DreamSettingsPatch = z.infer<typeof DreamSettingsPatchSchema>;

/** The defaults, from the flags. `--dream-delay-seconds 0` turns self-started work off. */
export function defaultDreamSettings(config: Config): DreamSettings {
  return {
    enabled: config.dreamDelaySeconds > 0,
    dream_delay_seconds: config.dreamDelaySeconds > 0 ? config.dreamDelaySeconds : 300,
    dream_cooldown_seconds: config.dreamCooldownSeconds,
    wake_lock_seconds: config.wakeLockSeconds,
    dream_max_tokens: config.dreamMaxTokens,
    dream_max_seconds: config.dreamMaxSeconds,
    dream_temperature: 1.2,
    dream_budget: config.dreamBudget,
    dream_budget_window_seconds: config.dreamBudgetWindowSeconds,
    idle_thoughts: true,
    idle_thought_delay_seconds: 30,
    idle_thought_max_tokens: 64,
    reflection_threshold: 8,
    reflection_max_tokens: 256,
    consolidation: config.consolidation,
    consolidation_interval_minutes: 60,
    consolidation_similarity: 0.9,
    dnd_max_seconds: 300,
  };
}

export interface DreamSettingsRow {
  settings: DreamSettings;
  /** Only what was changed through the API. */
  overrides: Partial<DreamSettings>;
  dndUntil: Date | null;
  dndReason: string | null;
}

/**
 * The settings in force. Stored overrides that no longer validate (an older version's, or
 * edited by hand) are skipped one by one, never fatal.
 */
export async function readDreamSettings(db: Queryable, defaults: DreamSettings): Promise<DreamSettingsRow> {
  const stored = await storedDreamSettings(db);
  const overrides: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored.overrides)) {
    const field = DreamSettingsSchema.shape[key as keyof DreamSettings];
    if (field?.safeParse(value).success) overrides[key] = value;
  }
  return {
    settings: { ...defaults, ...overrides },
    overrides: overrides as Partial<DreamSettings>,
    dndUntil: stored.dndUntil,
    dndReason: stored.dndReason,
  };
}

/** Applies a validated patch (null: back to the default) in one statement. */
export async function patchDreamSettings(db: Queryable, patch: DreamSettingsPatch): Promise<void> {
  const set = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== null && v !== undefined));
  const reset = Object.entries(patch)
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  await patchDreamOverrides(db, set, reset);
}

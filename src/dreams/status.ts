// What the dream life is doing now, and waking it: shared by the HTTP routes and MCP tools.
import { dreamState, type DreamState } from "../db/sql/dreams.js";
import type { Pool } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { WAKE_SIGNAL } from "./dream.js";
import { requestWake } from "../db/sql/dream-settings.js";
import { type DreamSettings, readDreamSettings } from "./settings.js";

/** After a turn, Psyche counts as awake this long. */
export const AWAKE_SECONDS = 60;

export interface DreamStatus extends DreamState {
  /** False under do-not-disturb: a chat waits for the reverie instead of waking it. */
  can_interrupt: boolean;
  dnd_until: Date | null;
  dnd_reason: string | null;
}

export async function dreamStatus(deps: { pool: Pool; dreamDefaults: DreamSettings }): Promise<DreamStatus> {
  const [state, { dndUntil, dndReason }] = await Promise.all([dreamState(deps.pool, AWAKE_SECONDS), readDreamSettings(deps.pool, deps.dreamDefaults)]);
  return { ...state, can_interrupt: dndUntil === null, dnd_until: dndUntil, dnd_reason: dndReason };
}

/** Wakes a running reverie, do-not-disturb or not (and ends do-not-disturb). */
export async function wakeUp(deps: { pool: Pool; bus: SignalBus }): Promise<{ was: DreamState["state"]; dream_id: string | null }> {
  const before = await dreamState(deps.pool, AWAKE_SECONDS);
  await requestWake(deps.pool);
  deps.bus.notify(Channel.jobs, WAKE_SIGNAL);
  return { was: before.state, dream_id: before.dream_id };
}

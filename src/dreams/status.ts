// What the dream life is doing now, and waking it: shared by the HTTP routes and MCP tools.
import { dreamState, type DreamState } from "../db/sql/dreams.js";
import type { Pool } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { WAKE_SIGNAL } from "./dream.js";
import { requestWake } from "../db/sql/dream-settings.js";
import { type DreamSettings, readDreamSettings } from "./settings.js";
import { type ClientRow, presentClients } from "../db/sql/clients.js";

/** After a turn, Psyche counts as awake this long. */
export const AWAKE_SECONDS = 60;

export interface DreamStatus extends DreamState {
  /** False under do-not-disturb: a chat waits for the reverie instead of waking it. */
  can_interrupt: boolean;
  dnd_until: Date | null;
  dnd_reason: string | null;
  /** Clients present (db/sql/clients.ts): while any is, no dream starts by itself. */
  clients: ClientRow[];
}

export async function dreamStatus(deps: { pool: Pool; dreamDefaults: DreamSettings; presenceTtlSeconds: number }): Promise<DreamStatus> {
  const [state, { dndUntil, dndReason }, clients] = await Promise.all([
    dreamState(deps.pool, AWAKE_SECONDS),
    readDreamSettings(deps.pool, deps.dreamDefaults),
    presentClients(deps.pool, deps.presenceTtlSeconds),
  ]);
  return { ...state, can_interrupt: dndUntil === null, dnd_until: dndUntil, dnd_reason: dndReason, clients };
}

/**
 * A client arrived (POST /v1/presence): a running reverie wakes at once, as for a chat, unless
 * do-not-disturb holds it (then a chat would wait too). True when it was asked to wake.
 */
export async function wakeForArrival(deps: { pool: Pool; bus: SignalBus; dreamDefaults: DreamSettings }): Promise<boolean> {
  const [state, { dndUntil }] = await Promise.all([dreamState(deps.pool, AWAKE_SECONDS), readDreamSettings(deps.pool, deps.dreamDefaults)]);
  if (dndUntil !== null || (state.state !== "dreaming" && state.state !== "waking")) return false;
  await wakeUp(deps);
  return true;
}

/** Wakes a running reverie, do-not-disturb or not (and ends do-not-disturb). */
export async function wakeUp(deps: { pool: Pool; bus: SignalBus }): Promise<{ was: DreamState["state"]; dream_id: string | null }> {
  const before = await dreamState(deps.pool, AWAKE_SECONDS);
  await requestWake(deps.pool);
  deps.bus.notify(Channel.jobs, WAKE_SIGNAL);
  return { was: before.state, dream_id: before.dream_id };
}

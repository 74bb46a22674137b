// The payload of a turn's signal: the turn id, and the event just written when it is small
// enough to carry (Postgres NOTIFY payloads stop at 8000 bytes). A follower may relay a
// carried event without reading it back; the table stays the source of truth.
import { z } from "zod";
import type { TurnEvent } from "../db/sql/turn-events.js";

const MAX_CARRIED = 3000;

const TurnSignalSchema = z.object({
  t: z.string(),
  e: z.object({ seq: z.number().int(), kind: z.enum(["delta", "reasoning", "done", "error"]), content: z.string() }).optional(),
});

export function encodeTurnSignal(turnId: string, event?: TurnEvent): string {
  const carry = event && event.content.length <= MAX_CARRIED ? event : undefined;
  return JSON.stringify(carry ? { t: turnId, e: carry } : { t: turnId });
}

export function decodeTurnSignal(payload: string): { turnId: string; event?: TurnEvent } | undefined {
  try {
    const parsed = TurnSignalSchema.safeParse(JSON.parse(payload));
    if (!parsed.success) return undefined;
    return parsed.data.e ? { turnId: parsed.data.t, event: parsed.data.e } : { turnId: parsed.data.t };
  } catch {
    return undefined;
  }
}

// The mood: its current state (decayed to now) and its recent history. GET /v1/mood, and
// /v1/emotion, its first name, which clients already use. The mood is the server's own, so every
// key reads it; what caused each change (a turn, a reverie) is in some scope, so a key bound to
// scopes gets the change without its source (http/request-scope.ts).
import { type Context, Hono } from "hono";
import type { WebServices } from "../../web-services.js";
import { fromZodError } from "../../errors.js";
import { MoodQuerySchema } from "../schemas/memory.js";
import { visibleScopes } from "../request-scope.js";

export function moodRoutes(deps: WebServices): Hono {
  const app = new Hono();
  const handler = async (c: Context) => {
    const parsed = MoodQuerySchema.safeParse(c.req.query());
    if (!parsed.success) throw fromZodError(parsed.error);
    const sources = visibleScopes(c) === null;
    const [current, history] = await Promise.all([deps.mood.current(), deps.mood.history(parsed.data.limit)]);
    return c.json({
      object: c.req.path === "/v1/emotion" ? "emotion" : "mood",
      valence: current.valence,
      arousal: current.arousal,
      updated_at: current.updatedAt,
      baseline: deps.mood.settings.baseline,
      half_life_minutes: deps.mood.settings.halfLifeMinutes,
      history: history.map((h) => ({
        at: h.at,
        valence: h.valence,
        arousal: h.arousal,
        cause: h.cause,
        source_id: sources ? h.source_id : null,
        stimulus: h.stimulus_valence === null ? null : { valence: h.stimulus_valence, arousal: h.stimulus_arousal },
      })),
    });
  };
  app.get("/v1/mood", handler);
  app.get("/v1/emotion", handler);
  return app;
}

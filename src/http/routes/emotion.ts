// The mood: its current state (decayed to now) and its recent history.
import { Hono } from "hono";
import type { HttpDeps } from "../deps.js";
import { fromZodError } from "../errors.js";
import { EmotionQuerySchema } from "../schemas/memory.js";

export function emotionRoutes(deps: HttpDeps): Hono {
  const app = new Hono();
  app.get("/v1/emotion", async (c) => {
    const parsed = EmotionQuerySchema.safeParse(c.req.query());
    if (!parsed.success) throw fromZodError(parsed.error);
    const [current, history] = await Promise.all([deps.mood.current(), deps.mood.history(parsed.data.limit)]);
    return c.json({
      object: "emotion",
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
        source_id: h.source_id,
        stimulus: h.stimulus_valence === null ? null : { valence: h.stimulus_valence, arousal: h.stimulus_arousal },
      })),
    });
  });
  return app;
}

// The dream settings (GET and PATCH /dream/config, stored in the database) and do-not-disturb
// (POST and DELETE /dream/dnd): Psyche sleeps undisturbed for a while, and requests wait.
import { Hono } from "hono";
import { z } from "zod";
import { chatsWaiting } from "../../db/sql/dreams.js";
import { reverieUnderway } from "../../db/sql/pgboss-jobs.js";
import { DND_SIGNAL } from "../../dreams/dream.js";
import { setDoNotDisturb } from "../../db/sql/dream-settings.js";
import { DreamSettingsPatchSchema, patchDreamSettings, readDreamSettings } from "../../dreams/settings.js";
import { Channel } from "../../jobs/bus.js";
import { INFERENCE_QUEUE } from "../../jobs/queue.js";
import { queueReverie, buildReverie } from "../../dreams/queue-reverie.js";
import type { WebServices } from "../../web-services.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { readJsonObject } from "../read-json.js";

const DndRequestSchema = z.strictObject({
  duration_seconds: z.number().int().positive(),
  reason: z.string().trim().min(1).max(200).optional(),
});

export function dreamConfigRoutes(deps: WebServices): Hono {
  const app = new Hono();

  const config = async () => {
    const { settings, overrides } = await readDreamSettings(deps.pool, deps.dreamDefaults);
    return { object: "dream.config", ...settings, overridden: Object.keys(overrides).sort() };
  };

  app.get("/dream/config", async (c) => c.json(await config()));

  app.patch("/dream/config", async (c) => {
    const parsed = DreamSettingsPatchSchema.safeParse(await readJsonObject(c));
    if (!parsed.success) throw fromZodError(parsed.error);
    await patchDreamSettings(deps.pool, parsed.data);
    deps.log.info({ changed: Object.keys(parsed.data) }, "dream settings changed");
    return c.json(await config());
  });

  app.post("/dream/dnd", async (c) => {
    const parsed = DndRequestSchema.safeParse(await readJsonObject(c));
    if (!parsed.success) throw fromZodError(parsed.error);
    const { settings } = await readDreamSettings(deps.pool, deps.dreamDefaults);
    const { duration_seconds: seconds, reason } = parsed.data;
    if (seconds > settings.dnd_max_seconds) {
      throw invalidRequest(
        `duration_seconds: at most ${settings.dnd_max_seconds} (dnd_max_seconds in /dream/config)`,
        "duration_seconds",
        "invalid_value",
      );
    }
    const until = new Date(Date.now() + seconds * 1000);
    await setDoNotDisturb(deps.pool, until, reason ?? null);
    // Do-not-disturb is for sleeping: dream now if nothing is on the way.
    let dreamJobId: string | null = null;
    if (!(await reverieUnderway(deps.pool, INFERENCE_QUEUE))) {
      dreamJobId = await queueReverie(deps, buildReverie(settings, { kind: "dream", focus: reason }));
    }
    deps.bus.notify(Channel.jobs, DND_SIGNAL);
    return c.json({
      object: "dream.dnd",
      dnd_until: until,
      reason: reason ?? null,
      queue_position: await chatsWaiting(deps.pool),
      dream_job_id: dreamJobId,
    });
  });

  app.delete("/dream/dnd", async (c) => {
    await setDoNotDisturb(deps.pool, null, null);
    // Counted before the signal lets the waiting chats go.
    const waiting = await chatsWaiting(deps.pool);
    deps.bus.notify(Channel.jobs, DND_SIGNAL);
    return c.json({ object: "dream.dnd", dnd_until: null, reason: null, queue_position: waiting, dream_job_id: null });
  });

  return app;
}

// Dream jobs and the dream journal. (Scheduling by idleness, status, wake, config and DND are
// the rest of the dreams issue.)
import { Hono } from "hono";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { dreamState, recentDreams } from "../../db/sql/dreams.js";
import { DREAM_SIGNAL } from "../../dreams/dream.js";
import { Channel } from "../../jobs/bus.js";
import { type DreamJob, INFERENCE_QUEUE, Priority } from "../../jobs/queue.js";
import type { HttpDeps } from "../deps.js";
import { fromZodError, invalidRequest } from "../errors.js";
import { readJsonObject } from "../read-json.js";

const DreamJobsRequestSchema = z.strictObject({
  kind: z.literal("dream", { error: 'kind must be "dream" (reflect and consolidate come later)' }),
  count: z.number().int().min(1).max(20).default(1),
  focus: z.string().trim().min(1).max(500).optional(),
  max_tokens: z.number().int().positive().max(8192).default(512),
});

/** After a turn, Psyche counts as awake this long. */
const AWAKE_SECONDS = 60;
const WAKE_SIGNAL = "wake";

const JournalQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(200).default(20) });

export function dreamRoutes(deps: HttpDeps): Hono {
  const app = new Hono();

  app.post("/dream/jobs", async (c) => {
    const parsed = DreamJobsRequestSchema.safeParse(await readJsonObject(c));
    if (!parsed.success) throw fromZodError(parsed.error);
    const { count, focus, max_tokens } = parsed.data;
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const job: DreamJob = { kind: "dream", focus: focus ?? null, maxTokens: max_tokens };
      const id = await deps.boss.send(INFERENCE_QUEUE, job, { id: randomUUID(), priority: Priority.dream, retryLimit: 0 });
      if (!id) throw invalidRequest("the queue did not accept the dream job");
      ids.push(id);
    }
    deps.bus.notify(Channel.jobs, DREAM_SIGNAL);
    return c.json({ object: "list", data: ids.map((id) => ({ object: "dream.job", id, kind: "dream", status: "queued" })) }, 202);
  });

  app.get("/dream/status", async (c) => c.json({ object: "dream.status", ...(await dreamState(deps.pool, AWAKE_SECONDS)) }));

  // Wakes a running dream in this process's worker (and, where LISTEN/NOTIFY reaches, any).
  app.post("/dream/wake", async (c) => {
    const before = await dreamState(deps.pool, AWAKE_SECONDS);
    deps.bus.notify(Channel.jobs, WAKE_SIGNAL);
    return c.json({ object: "dream.wake", was: before.state, dream_id: before.dream_id });
  });

  app.get("/dream/journal", async (c) => {
    const parsed = JournalQuerySchema.safeParse(c.req.query());
    if (!parsed.success) throw fromZodError(parsed.error);
    return c.json({ object: "list", data: await recentDreams(deps.pool, parsed.data.limit) });
  });

  return app;
}

// Dream jobs (dream, reflect, consolidate, in batches), their status, the dream journal, the
// dream state, and waking. Settings and do-not-disturb are in dream-config.ts. A key bound to
// scopes (or a request naming one) queues reveries in its scope, reads its scopes' journal, and
// of another scope's running reverie sees only that one runs (http/request-scope.ts).
import { ScopeSchema } from "../../scope.js";
import { Hono } from "hono";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { JOURNAL_KINDS, JOURNAL_STATUSES, recentDreams } from "../../db/sql/dreams.js";
import { reverieJob } from "../../db/sql/pgboss-jobs.js";
import { readDreamSettings } from "../../dreams/settings.js";
import { dreamStatus, wakeUp } from "../../dreams/status.js";
import { Channel } from "../../jobs/bus.js";
import { type ConsolidateJob, DUE_AT_ONCE, INFERENCE_QUEUE, MAINTENANCE_QUEUE, MAINTENANCE_SIGNAL, Priority } from "../../jobs/queue.js";
import { buildReverie, queueReverie } from "../../dreams/queue-reverie.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { fromZodError, invalidRequest, UserError } from "../../errors.js";
import { readJsonObject } from "../read-json.js";
import { checkScope, keyScopes, requestScope, visibleScopes } from "../request-scope.js";

const DreamJobsRequestSchema = z
  .strictObject({
    kind: z.enum(["reflect", "dream", "consolidate"], { error: 'kind must be "reflect", "dream" or "consolidate"' }),
    count: z.number().int().min(1).max(20).default(1),
    focus: z.string().trim().min(1).max(500).optional(),
    max_tokens: z.number().int().positive().max(8192).optional(),
    /** The one scope it draws on (default: where the newest memory is). */
    scope: ScopeSchema.optional(),
  })
  .refine((r) => r.kind !== "consolidate" || (r.focus === undefined && r.max_tokens === undefined && r.scope === undefined), {
    message: "a consolidation takes neither focus, max_tokens nor scope",
    path: ["kind"],
  });

const JournalQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(20),
  kind: z.enum(JOURNAL_KINDS).optional(),
  status: z.enum(JOURNAL_STATUSES).optional(),
  /** An ISO time: entries that began before it (the previous page's next_before). */
  before: z.iso
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .optional(),
});

const JOB_STATES: Record<string, string> = {
  created: "queued",
  retry: "queued",
  active: "running",
  completed: "completed",
  cancelled: "cancelled",
  failed: "failed",
};

export function dreamRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/dream/jobs", async (c) => {
    const parsed = DreamJobsRequestSchema.safeParse(await readJsonObject(c));
    if (!parsed.success) throw fromZodError(parsed.error);
    const { kind, count, focus } = parsed.data;
    const bound = keyScopes(c) !== null;
    if (bound && kind === "consolidate")
      throw new UserError("a consolidation runs over every scope: it needs an API key that opens every scope", {
        status: 403,
        param: "kind",
        code: "scope_not_allowed",
      });
    // A bound key's reverie draws on its own scope, never on where the newest memory happens to be.
    const scope = parsed.data.scope !== undefined ? checkScope(c, parsed.data.scope) : bound ? requestScope(c) : undefined;
    const { settings } = await readDreamSettings(deps.pool, deps.dreamDefaults);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      let id: string | null;
      if (kind === "consolidate") {
        const job: ConsolidateJob = { kind };
        id = await deps.boss.send(MAINTENANCE_QUEUE, job, {
          ...DUE_AT_ONCE,
          id: randomUUID(),
          priority: Priority.maintenance,
          retryLimit: 2,
        });
      } else {
        id = await queueReverie(deps, {
          ...buildReverie(settings, { kind, focus, maxTokens: parsed.data.max_tokens }),
          scope: scope ?? null,
        });
      }
      if (!id) throw new ApiError(503, "service_unavailable", "the queue did not accept the job");
      ids.push(id);
    }
    if (kind === "consolidate") deps.bus.notify(Channel.memory, MAINTENANCE_SIGNAL);
    return c.json(
      { object: "list", data: ids.map((id) => ({ object: "dream.job", id, kind, focus: focus ?? null, status: "queued" })) },
      202,
    );
  });

  app.get("/dream/jobs/:id", async (c) => {
    const id = c.req.param("id");
    if (!z.uuid().safeParse(id).success) throw invalidRequest(`'${id}' is not a job id (a UUID)`, "id");
    const job = await reverieJob(deps.pool, id, [INFERENCE_QUEUE, MAINTENANCE_QUEUE]);
    const kind = job?.data["kind"];
    if (!job || (kind !== "dream" && kind !== "reflect" && kind !== "consolidate" && kind !== "idle")) {
      throw new ApiError(404, "not_found_error", `No dream job '${id}'`, { param: "id", code: "job_not_found" });
    }
    const visible = visibleScopes(c);
    const journal = await recentDreams(deps.pool, { limit: 20, jobId: id });
    const jobScope = (job?.data["scope"] as string | null | undefined) ?? journal[0]?.scope ?? null;
    if (visible && job && (kind === "consolidate" || (jobScope !== null && !visible.includes(jobScope))))
      throw new ApiError(404, "not_found_error", `No dream job '${id}'`, { param: "id", code: "job_not_found" });
    return c.json({
      object: "dream.job",
      id,
      kind,
      focus: (job.data["focus"] as string | null | undefined) ?? null,
      status: JOB_STATES[job.state] ?? job.state,
      created_at: job.created_on,
      started_at: job.started_on,
      completed_at: job.completed_on,
      error: job.state === "failed" ? job.output : null,
      journal,
    });
  });

  app.get("/dream/status", async (c) => {
    const visible = visibleScopes(c);
    const status = await dreamStatus(deps);
    // Another scope's reverie: that one runs is the server's state; what it turns over is not.
    const hidden = visible !== null && status.scope !== null && !visible.includes(status.scope);
    return c.json({ object: "dream.status", ...status, ...(hidden ? { focus: null, dream_id: null, scope: null, topics: [] } : {}) });
  });

  app.post("/dream/wake", async (c) => c.json({ object: "dream.wake", ...(await wakeUp(deps)) }));

  app.get("/dream/journal", async (c) => {
    const parsed = JournalQuerySchema.safeParse(c.req.query());
    if (!parsed.success) throw fromZodError(parsed.error);
    const { limit } = parsed.data;
    const rows = await recentDreams(deps.pool, { ...parsed.data, limit: limit + 1, scopes: visibleScopes(c) });
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    return c.json({ object: "list", data: page, has_more: hasMore, next_before: hasMore ? page.at(-1)!.started_at : null });
  });

  return app;
}

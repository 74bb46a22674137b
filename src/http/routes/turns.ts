// Psyche's own turn endpoints: status, resuming a stream, cancelling.
import { Hono } from "hono";
import { z } from "zod";
import { TurnFollower } from "../../conversation/follow-turn.js";
import { getTurn, requestCancel } from "../../db/sql/turns.js";
import { Channel } from "../../jobs/bus.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { invalidRequest } from "../../errors.js";
import { relayTurn } from "../relay-turn.js";
import { completionId, turnUsage } from "../chat/render.js";
import { chatStreamFrames } from "../chat/stream.js";

const TurnIdSchema = z.string().uuid();
const SeqSchema = z.coerce.number().int().min(0);

function turnId(raw: string): string {
  const parsed = TurnIdSchema.safeParse(raw);
  if (!parsed.success) throw invalidRequest("turn ids are UUIDs (the X-Psyche-Turn header of a chat response)", "id");
  return parsed.data;
}

const notFound = (id: string) => new ApiError(404, "not_found_error", `no turn ${id}`, { param: "id", code: "turn_not_found" });

export function turnRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.get("/v1/turns/:id", async (c) => {
    const id = turnId(c.req.param("id"));
    const turn = await getTurn(deps.pool, id);
    if (!turn) throw notFound(id);
    return c.json({
      id: turn.id,
      conversation_id: turn.conversation_id,
      status: turn.status,
      content: turn.content,
      reasoning: turn.reasoning,
      finish_reason: turn.finish_reason,
      attempts: turn.attempts,
      error: turn.error,
      usage: turnUsage(turn),
      created_at: turn.created_at,
      finished_at: turn.finished_at,
    });
  });

  /** Resumes a stream: events after `?after=N` or the Last-Event-ID header (default: all). */
  app.get("/v1/turns/:id/events", async (c) => {
    const id = turnId(c.req.param("id"));
    const raw = c.req.query("after") ?? c.req.header("last-event-id") ?? "0";
    const after = SeqSchema.safeParse(raw);
    if (!after.success) throw invalidRequest("after / Last-Event-ID must be a non-negative integer", "after");
    const turn = await getTurn(deps.pool, id);
    if (!turn) throw notFound(id);
    if (turn.conversation_id) c.header("X-Psyche-Conversation", turn.conversation_id);
    return relayTurn(c, deps, {
      follower: new TurnFollower(deps, id),
      fresh: false,
      afterSeq: after.data,
      read: (turnId) => getTurn(deps.pool, turnId),
      frames: chatStreamFrames({
        base: { id: completionId(id), created: Math.floor(turn.created_at.getTime() / 1000), model: turn.model },
        includeUsage: c.req.query("include_usage") === "true",
        announceRole: after.data === 0,
        turnId: id,
      }),
    });
  });

  app.post("/v1/turns/:id/cancel", async (c) => {
    const id = turnId(c.req.param("id"));
    const status = await requestCancel(deps.pool, id);
    if (!status) throw notFound(id);
    deps.bus.notify(Channel.cancel, id);
    return c.json({ id, status, cancel_requested: status === "queued" || status === "running" });
  });

  return app;
}

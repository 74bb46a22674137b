// OpenAI's Responses API over Psyche's conversations (docs/api.md, "The Responses API"): a response
// is a turn, so it recalls memories, moves the mood, wakes a dream and survives a client that
// leaves or a worker that dies, exactly as a chat completion does.
import { Hono } from "hono";
import { z } from "zod";
import { openTurn } from "../../conversation/open-turn.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import { TurnFollower } from "../../conversation/follow-turn.js";
import { responseId, turnIdOf } from "../../conversation/response-ids.js";
import { deleteResponse, getResponse, type ResponseRow } from "../../db/sql/responses.js";
import { requestCancel } from "../../db/sql/turns.js";
import { Channel } from "../../jobs/bus.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { readJsonObject } from "../read-json.js";
import { relayTurn } from "../relay-turn.js";
import { reportIgnored } from "../request-fields.js";
import { requestScope } from "../request-scope.js";
import { ResponseIdSchema } from "../schemas/responses.js";
import { responseObject } from "../responses/render.js";
import { responseStreamFrames } from "../responses/stream.js";
import { responsesRequest } from "../responses/translate.js";
import { turnHeaders } from "../turn-headers.js";

const notFound = (id: string) =>
  new ApiError(404, "not_found_error", `Response with id '${id}' not found.`, { param: "response_id", code: "response_not_found" });

/** The turn id of a response the client may see: stored, not deleted. */
async function visibleResponse(deps: WebServices, raw: string): Promise<ResponseRow> {
  const id = ResponseIdSchema.safeParse(raw);
  if (!id.success)
    throw invalidRequest(`Invalid response id '${raw.slice(0, 80)}': ${id.error.issues[0]?.message}`, "response_id", "invalid_value");
  const row = await getResponse(deps.pool, turnIdOf(id.data));
  if (!row || !row.store || row.deleted_at) throw notFound(id.data);
  return row;
}

const ListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  after: z.string().max(128).optional(),
});

export function responseRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/v1/responses", async (c) => {
    const { request, ignored } = responsesRequest(await readJsonObject(c), (h) => c.req.header(h), {
      strict: deps.strictParams,
      scope: requestScope(c),
    });
    const turn = await openTurn(deps, request);
    reportIgnored(c, deps, "responses", [...ignored, ...turn.ignored]);
    turnHeaders(c, turn);
    if (request.stream) {
      const row = await getResponse(deps.pool, turn.turnId);
      if (!row) throw new Error(`response ${turn.turnId} was not stored`);
      return relayTurn(c, deps, {
        follower: turn.follower,
        fresh: true,
        afterSeq: 0,
        read: (id) => getResponse(deps.pool, id),
        frames: responseStreamFrames({ row, startingAfter: -1 }),
      });
    }
    // Not streaming: wait for the end. A client that goes away does not cancel it.
    await finishedTurn(deps, turn.follower, c.req.raw.signal);
    const row = await getResponse(deps.pool, turn.turnId);
    if (!row) throw new Error(`response ${turn.turnId} was not stored`);
    return c.json(responseObject(row));
  });

  /** The response; with ?stream=true its events from the start, or after `starting_after`. */
  app.get("/v1/responses/:id", async (c) => {
    const row = await visibleResponse(deps, c.req.param("id"));
    c.header("X-Psyche-Conversation", row.conversation_id ?? undefined);
    if (c.req.query("stream") !== "true") return c.json(responseObject(row));
    const after = z.coerce
      .number()
      .int()
      .min(0)
      .safeParse(c.req.query("starting_after") ?? "0");
    if (!after.success) throw invalidRequest("starting_after must be a non-negative integer", "starting_after");
    return relayTurn(c, deps, {
      follower: new TurnFollower(deps, row.id),
      fresh: false,
      afterSeq: 0,
      read: (id) => getResponse(deps.pool, id),
      frames: responseStreamFrames({ row, startingAfter: c.req.query("starting_after") === undefined ? -1 : after.data }),
    });
  });

  app.get("/v1/responses/:id/input_items", async (c) => {
    const row = await visibleResponse(deps, c.req.param("id"));
    const q = ListQuerySchema.safeParse(c.req.query());
    if (!q.success) throw fromZodError(q.error);
    const { limit, order, after } = q.data;
    const items = order === "asc" ? row.input : [...row.input].reverse();
    let from = 0;
    if (after !== undefined) {
      const k = items.findIndex((i) => i.id === after);
      if (k === -1) throw invalidRequest(`after names no input item of ${responseId(row.id)}`, "after");
      from = k + 1;
    }
    const data = items.slice(from, from + limit);
    return c.json({
      object: "list",
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: from + limit < items.length,
    });
  });

  /** Deleted responses cannot be read or continued; the conversation keeps its messages (they are memory). */
  app.delete("/v1/responses/:id", async (c) => {
    const row = await visibleResponse(deps, c.req.param("id"));
    if (!(await deleteResponse(deps.pool, row.id))) throw notFound(responseId(row.id));
    return c.json({ id: responseId(row.id), object: "response.deleted", deleted: true });
  });

  app.post("/v1/responses/:id/cancel", async (c) => {
    const row = await visibleResponse(deps, c.req.param("id"));
    await requestCancel(deps.pool, row.id);
    deps.bus.notify(Channel.cancel, row.id);
    return c.json(responseObject(row));
  });

  return app;
}

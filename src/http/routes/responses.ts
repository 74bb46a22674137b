// OpenAI's Responses API over Psyche's conversations (docs/api.md, "The Responses API"): a response
// is a turn, so it recalls memories, moves the mood, wakes a dream and survives a client that
// leaves or a worker that dies, exactly as a chat completion does.
import { requestScope } from "../request-scope.js";
import { Hono } from "hono";
import { z } from "zod";
import { replyBudget, startFollowed } from "../../conversation/followed-turn.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import { TurnFollower } from "../../conversation/follow-turn.js";
import { deleteResponse, getResponse, type ResponseRow } from "../../db/sql/responses.js";
import { requestCancel } from "../../db/sql/turns.js";
import { Channel } from "../../jobs/bus.js";
import { fromZodError, invalidRequest, UserError } from "../../errors.js";
import { requestTools } from "../../tools/request-tools.js";
import { requestResponseFormat } from "../../tools/response-format.js";
import { startResponse } from "../../conversation/start-response.js";
import { responseId, turnIdOf } from "../../conversation/response-ids.js";
import type { WebServices } from "../../web-services.js";
import { ApiError, modelNotFound } from "../errors.js";
import { readJsonObject } from "../read-json.js";
import { RESPONSES_NOT_HONOURED, ResponseIdSchema, type ResponsesRequest, ResponsesRequestSchema } from "../schemas/responses.js";
import { fieldsToIgnore, reportIgnored, withoutFields } from "../request-fields.js";
import { itemsToMessages, storedInputItems } from "../responses/input-items.js";
import { responseObject } from "../responses/render.js";
import { streamResponse } from "../responses/stream.js";

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

/** The chat API's tools and formats, checked by the same code (tools/request-tools.ts), with this API's field names in errors. */
function toolsAndFormat(req: ResponsesRequest) {
  try {
    const { tools, toolChoice } = requestTools({
      tools: req.tools?.map((t) => ({
        type: "function" as const,
        function: { name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? undefined, strict: t.strict },
      })),
      tool_choice:
        typeof req.tool_choice === "object" && req.tool_choice !== null
          ? { type: "function", function: { name: req.tool_choice.name } }
          : req.tool_choice,
    });
    const f = req.text?.format;
    const raw =
      !f || f.type !== "json_schema"
        ? f
        : { type: "json_schema" as const, json_schema: { name: f.name, description: f.description, schema: f.schema, strict: f.strict } };
    const responseFormat = requestResponseFormat(raw, tools !== null && toolChoice !== "none", "text.format");
    return { tools, toolChoice, responseFormat };
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    const rename = (s: string) => s.replace(/\.function\./g, ".").replace("text.format.json_schema.schema", "text.format.schema");
    throw new UserError(rename(err.message), { status: err.status, param: err.param === null ? null : rename(err.param), code: err.code });
  }
}

const ListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  after: z.string().max(128).optional(),
});

/**
 * The function tools alone: tools of other types (OpenAI's hosted ones, Codex's namespaces of
 * sub-agent tools) are ignored and named, as unknown fields are, unless --strict-params.
 */
function withoutOtherTools(body: Record<string, unknown>): { body: Record<string, unknown>; dropped: string[] } {
  if (!Array.isArray(body.tools)) return { body, dropped: [] };
  const typeOf = (t: unknown) => (typeof t === "object" && t !== null ? (t as { type?: unknown; name?: unknown }) : {});
  const dropped = body.tools
    .filter((t) => typeOf(t).type !== "function")
    .map((t) => `tools:${String(typeOf(t).type)}${typeof typeOf(t).name === "string" ? `:${String(typeOf(t).name)}` : ""}`);
  return dropped.length
    ? { body: { ...body, tools: body.tools.filter((t) => typeOf(t).type === "function") }, dropped }
    : { body, dropped };
}

/** Codex's `session-id` header (a UUID) as a conversation id. */
function codexConversation(header: string | undefined): string | undefined {
  return header && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(header)
    ? `codex-${header.toLowerCase()}`
    : undefined;
}

export function responseRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/v1/responses", async (c) => {
    const body = await readJsonObject(c);
    const ignored = fieldsToIgnore(body, { known: ResponsesRequestSchema.shape, notHonoured: RESPONSES_NOT_HONOURED }, deps.strictParams);
    const { body: functionsOnly, dropped } = deps.strictParams ? { body, dropped: [] } : withoutOtherTools(body);
    const parsed = ResponsesRequestSchema.safeParse(withoutFields(functionsOnly, ignored));
    if (!parsed.success) throw fromZodError(parsed.error);
    const req = parsed.data;
    const { tools, toolChoice, responseFormat } = toolsAndFormat(req);
    if (req.model !== deps.modelId && deps.strictParams) throw modelNotFound(req.model, deps.modelId);
    const maxTokens = replyBudget(req.max_output_tokens, deps.maxTokens, "max_output_tokens", deps.strictParams);
    const items = storedInputItems(req.input);
    const named = typeof req.conversation === "object" && req.conversation !== null ? req.conversation.id : (req.conversation ?? undefined);
    // Codex names its session in a header: one session, one conversation (ARCHITECTURE §2: named, never guessed).
    const conversation = named ?? (req.previous_response_id ? undefined : codexConversation(c.req.header("session-id")));

    const scope = requestScope(c);
    const { follower, started } = await startFollowed(deps, (turnId) =>
      startResponse(deps, {
        turnId,
        conversationId: conversation,
        scope,
        messages: itemsToMessages(items),
        items,
        previousTurnId: req.previous_response_id ? turnIdOf(req.previous_response_id) : null,
        store: req.store ?? true,
        metadata: req.metadata ?? null,
        instructions: req.instructions ?? null,
        tools,
        toolChoice,
        parallelToolCalls: req.parallel_tool_calls ?? null,
        responseFormat,
        presencePenalty: req.presence_penalty ?? null,
        frequencyPenalty: req.frequency_penalty ?? null,
        logitBias: req.logit_bias ?? null,
        model: deps.modelId,
        temperature: req.temperature ?? null,
        topP: req.top_p ?? null,
        maxTokens,
        seed: req.seed ?? null,
        stop: [],
        stream: req.stream ?? false,
      }),
    );
    reportIgnored(c, deps, "responses", [...ignored, ...dropped]);
    c.header("X-Psyche-Conversation", started.conversationId);
    c.header("X-Psyche-Turn", started.turnId);

    if (req.stream) {
      const row = await getResponse(deps.pool, started.turnId);
      if (!row) throw new Error(`response ${started.turnId} was not stored`);
      return streamResponse(c, deps, { follower, fresh: true, row, startingAfter: -1 });
    }
    // Not streaming: wait for the end. A client that goes away does not cancel it.
    await finishedTurn(deps, follower, c.req.raw.signal);
    const row = await getResponse(deps.pool, started.turnId);
    if (!row) throw new Error(`response ${started.turnId} was not stored`);
    return c.json(responseObject(row));
  });

  /** The response; with ?stream=true its events from the start, or after `starting_after`. */
  app.get("/v1/responses/:id", async (c) => {
    const row = await visibleResponse(deps, c.req.param("id"));
    c.header("X-Psyche-Conversation", row.conversation_id);
    if (c.req.query("stream") !== "true") return c.json(responseObject(row));
    const after = z.coerce
      .number()
      .int()
      .min(0)
      .safeParse(c.req.query("starting_after") ?? "0");
    if (!after.success) throw invalidRequest("starting_after must be a non-negative integer", "starting_after");
    return streamResponse(c, deps, {
      follower: new TurnFollower(deps, row.id),
      fresh: false,
      row,
      startingAfter: c.req.query("starting_after") === undefined ? -1 : after.data,
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

// Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens): what Claude Code and
// the Anthropic SDK speak. A message is a turn like any other (conversation/open-turn.ts):
// memory, mood, dreams woken, stored in Postgres, resumable (GET /v1/turns/:id/events), alive
// through a worker's crash. Errors are in Anthropic's shape (http/app.ts).
import { Hono } from "hono";
import { openTurn } from "../../conversation/open-turn.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import { getTurn } from "../../db/sql/turns.js";
import { fromZodError } from "../../errors.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { messagesRequest, turnMessages, turnTools } from "../messages/translate.js";
import { messageObject } from "../messages/render.js";
import { messageStreamFrames } from "../messages/stream.js";
import { readJsonObject } from "../read-json.js";
import { relayTurn } from "../relay-turn.js";
import { fieldsToIgnore, reportIgnored, withoutFields } from "../request-fields.js";
import { requestScope } from "../request-scope.js";
import { CountTokensRequestSchema, MESSAGES_NOT_HONOURED, MessagesRequestSchema } from "../schemas/messages.js";
import { turnHeaders } from "../turn-headers.js";

export function messageRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/v1/messages", async (c) => {
    const { request, ignored } = messagesRequest(await readJsonObject(c), (h) => c.req.header(h), {
      strict: deps.strictParams,
      scope: requestScope(c),
    });
    const turn = await openTurn(deps, request);
    reportIgnored(c, deps, "messages", [...ignored, ...turn.ignored]);
    turnHeaders(c, turn);
    if (request.stream)
      return relayTurn(c, deps, {
        follower: turn.follower,
        fresh: true,
        afterSeq: 0,
        read: (id) => getTurn(deps.pool, id),
        frames: messageStreamFrames({ turnId: turn.turnId, model: deps.modelId, inputTokens: 0 }),
      });
    // Not streaming: wait for the end. A client that goes away does not cancel it.
    return c.json(messageObject(await finishedTurn(deps, turn.follower, c.req.raw.signal), deps.modelId));
  });

  app.post("/v1/messages/count_tokens", async (c) => {
    const body = await readJsonObject(c);
    const ignored = fieldsToIgnore(
      body,
      { known: { ...MessagesRequestSchema.shape, ...CountTokensRequestSchema.shape }, notHonoured: MESSAGES_NOT_HONOURED },
      deps.strictParams,
    );
    const parsed = CountTokensRequestSchema.safeParse(withoutFields(body, ignored));
    if (!parsed.success) throw fromZodError(parsed.error);
    const { tools } = turnTools(parsed.data);
    // The model's own tokenizer over what the prompt holds: the system prompt, every message, the tools.
    const texts = [
      ...turnMessages(parsed.data.system, parsed.data.messages).map(
        (m) => `${m.content}${m.toolCalls?.length ? JSON.stringify(m.toolCalls) : ""}`,
      ),
      ...(tools ?? []).map((t) => JSON.stringify(t)),
    ];
    const counted = deps.countTokens ? await deps.countTokens(texts.join("\n")) : undefined;
    if (counted === undefined)
      throw new ApiError(
        503,
        "server_error",
        "count_tokens needs the model's tokenizer, which this process could not load: the model file is not on this machine",
      );
    reportIgnored(c, deps, "messages.count_tokens", ignored);
    return c.json({ input_tokens: counted });
  });

  return app;
}

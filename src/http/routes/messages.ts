// Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens): what Claude Code and
// the Anthropic SDK speak. A message is a turn like any other (conversation/start-turn.ts):
// memory, mood, dreams woken, stored in Postgres, resumable (GET /v1/turns/:id/events), alive
// through a worker's crash. Errors are in Anthropic's shape (http/app.ts).
import { requestScope } from "../request-scope.js";
import { Hono } from "hono";
import { replyBudget, startFollowed } from "../../conversation/followed-turn.js";
import { startTurn } from "../../conversation/start-turn.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import { ConversationIdSchema } from "../../conversation-id.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import type { WebServices } from "../../web-services.js";
import { ApiError, modelNotFound } from "../errors.js";
import { agentConversation, turnMessages, turnTools } from "../messages/translate.js";
import { messageObject } from "../messages/render.js";
import { streamMessage } from "../messages/stream.js";
import { readJsonObject } from "../read-json.js";
import { fieldsToIgnore, reportIgnored, withoutFields } from "../request-fields.js";
import { CountTokensRequestSchema, MESSAGES_NOT_HONOURED, MessagesRequestSchema } from "../schemas/messages.js";

export function messageRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/v1/messages", async (c) => {
    const body = await readJsonObject(c);
    const ignored = fieldsToIgnore(body, { known: MessagesRequestSchema.shape, notHonoured: MESSAGES_NOT_HONOURED }, deps.strictParams);
    const parsed = MessagesRequestSchema.safeParse(withoutFields(body, ignored));
    if (!parsed.success) throw fromZodError(parsed.error);
    const req = parsed.data;
    const { tools, toolChoice, serverTools } = turnTools(req);
    if (serverTools.length && deps.strictParams)
      throw invalidRequest(
        `${serverTools[0]}: Anthropic's server tools are not available on this server`,
        "tools",
        "unsupported_parameter",
      );
    if (req.model !== deps.modelId && deps.strictParams) throw modelNotFound(req.model, deps.modelId);
    const maxTokens = replyBudget(req.max_tokens, deps.maxTokens, "max_tokens", deps.strictParams);
    const named = c.req.header("x-psyche-conversation");
    const id = named !== undefined ? ConversationIdSchema.safeParse(named) : undefined;
    if (id && !id.success) throw invalidRequest(`Invalid conversation id: ${id.error.issues[0]?.message}`, "X-Psyche-Conversation");
    const conversationId = id?.data ?? agentConversation(req.metadata?.user_id, c.req.header("x-claude-code-session-id"));
    const disableParallel =
      req.tool_choice && "disable_parallel_tool_use" in req.tool_choice ? req.tool_choice.disable_parallel_tool_use : undefined;

    const scope = requestScope(c);
    const { follower, started } = await startFollowed(deps, (turnId) =>
      startTurn(deps, {
        turnId,
        conversationId,
        scope,
        messages: turnMessages(req.system, req.messages),
        tools,
        toolChoice,
        parallelToolCalls: disableParallel === undefined ? null : !disableParallel,
        model: deps.modelId,
        temperature: req.temperature ?? null,
        topP: req.top_p ?? null,
        topK: req.top_k ?? null,
        maxTokens,
        seed: null,
        stop: req.stop_sequences ?? [],
        stream: req.stream ?? false,
      }),
    );
    reportIgnored(c, deps, "messages", [...ignored, ...serverTools]);
    c.header("X-Psyche-Conversation", started.conversationId);
    c.header("X-Psyche-Turn", started.turnId);
    if (req.stream) return streamMessage(c, deps, { follower, model: deps.modelId, inputTokens: 0 });
    // Not streaming: wait for the end. A client that goes away does not cancel it.
    const turn = await finishedTurn(deps, follower, c.req.raw.signal);
    return c.json(messageObject(turn, deps.modelId));
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

import { requestScope } from "../request-scope.js";
import { Hono } from "hono";
import { replyBudget, startFollowed } from "../../conversation/followed-turn.js";
import { startTurn } from "../../conversation/start-turn.js";
import { TURN_PURPOSES, type TurnPurpose } from "../../db/sql/turns.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import type { WebServices } from "../../web-services.js";
import { modelNotFound } from "../errors.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { readJsonObject } from "../read-json.js";
import { ConversationIdSchema } from "../../conversation-id.js";
import { CHAT_NOT_HONOURED, ChatCompletionRequestSchema } from "../schemas/chat.js";
import { fieldsToIgnore, reportIgnored, withoutFields } from "../request-fields.js";
import { openAiFinish, usageOf } from "../sse.js";
import { streamTurn } from "../stream-turn.js";
import { requestTools } from "../../tools/request-tools.js";
import { requestResponseFormat } from "../../tools/response-format.js";
import { replyReport, toolCallsJson } from "../tools.js";

/** Headers a client may name its conversation with (docs/api.md). */
const CONVERSATION_HEADERS = ["x-psyche-conversation", "x-openwebui-chat-id"];

/** X-Psyche-Purpose: why the turn is asked for (chat, the default, or exploration). */
function turnPurpose(header: string | undefined): TurnPurpose {
  if (header === undefined) return "chat";
  const value = header.trim().toLowerCase();
  if (!(TURN_PURPOSES as readonly string[]).includes(value))
    throw invalidRequest(
      `X-Psyche-Purpose must be one of ${TURN_PURPOSES.join(", ")}, not ${JSON.stringify(header.slice(0, 40))}`,
      "X-Psyche-Purpose",
    );
  return value as TurnPurpose;
}

export function chatCompletionRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/v1/chat/completions", async (c) => {
    const body = await readJsonObject(c);
    const ignored = fieldsToIgnore(body, { known: ChatCompletionRequestSchema.shape, notHonoured: CHAT_NOT_HONOURED }, deps.strictParams);
    const parsed = ChatCompletionRequestSchema.safeParse(withoutFields(body, ignored));
    if (!parsed.success) throw fromZodError(parsed.error);
    const req = parsed.data;
    const { tools, toolChoice } = requestTools(req);
    const responseFormat = requestResponseFormat(req.response_format, tools !== null && toolChoice !== "none");
    // Agents name their own models: the one model serves them all, and says so in the reply.
    if (req.model !== deps.modelId && deps.strictParams) throw modelNotFound(req.model, deps.modelId);
    const maxTokens = replyBudget(
      req.max_completion_tokens ?? req.max_tokens,
      deps.maxTokens,
      req.max_completion_tokens ? "max_completion_tokens" : "max_tokens",
      deps.strictParams,
    );
    const rawId = CONVERSATION_HEADERS.map((h) => c.req.header(h)).find((v) => v !== undefined) ?? req.metadata?.conversation_id;
    let conversationId: string | undefined;
    if (rawId !== undefined) {
      const id = ConversationIdSchema.safeParse(rawId);
      if (!id.success) throw invalidRequest(`Invalid conversation id: ${id.error.issues[0]?.message}`, "conversation_id");
      conversationId = id.data;
    }

    const purpose = turnPurpose(c.req.header("x-psyche-purpose"));
    const scope = requestScope(c);
    const { follower, started } = await startFollowed(deps, (turnId) =>
      startTurn(deps, {
        turnId,
        conversationId,
        scope,
        messages: req.messages.map((m) => ({
          role: m.role === "developer" ? "system" : m.role,
          content: m.content,
          name: "name" in m ? m.name : undefined,
          toolCalls:
            "tool_calls" in m
              ? m.tool_calls?.map((tc) => ({ id: tc.id, name: tc.function.name, arguments: tc.function.arguments }))
              : undefined,
          toolCallId: "tool_call_id" in m ? m.tool_call_id : undefined,
        })),
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
        stop: req.stop === undefined || req.stop === null ? [] : typeof req.stop === "string" ? [req.stop] : req.stop,
        stream: req.stream ?? false,
        purpose,
      }),
    );
    reportIgnored(c, deps, "chat.completions", ignored);
    c.header("X-Psyche-Conversation", started.conversationId);
    c.header("X-Psyche-Turn", started.turnId);
    const base = { id: `chatcmpl-${started.turnId}`, created: Math.floor(Date.now() / 1000), model: deps.modelId };

    if (req.stream) {
      return streamTurn(c, deps, {
        follower,
        fresh: true,
        base,
        afterSeq: 0,
        includeUsage: req.stream_options?.include_usage ?? false,
        announceRole: true,
      });
    }

    // Not streaming: wait for the closing event. A client that goes away does not cancel it.
    const turn = await finishedTurn(deps, follower, c.req.raw.signal);
    return c.json({
      id: base.id,
      object: "chat.completion",
      created: base.created,
      model: base.model,
      system_fingerprint: null,
      choices: [
        {
          index: 0,
          message: turn.tool_calls?.length
            ? { role: "assistant", content: turn.content || null, refusal: null, tool_calls: toolCallsJson(turn.tool_calls) }
            : { role: "assistant", content: turn.content ?? "", refusal: null },
          logprobs: null,
          finish_reason: openAiFinish(turn.finish_reason),
        },
      ],
      usage: usageOf(turn.prompt_tokens, turn.completion_tokens, turn.cached_tokens),
      psyche: {
        conversation_id: started.conversationId,
        turn_id: started.turnId,
        ...replyReport(turn),
      },
    });
  });

  return app;
}

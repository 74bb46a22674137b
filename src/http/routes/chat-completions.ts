import { Hono } from "hono";
import { randomUUID } from "node:crypto";
import { TurnFollower } from "../../conversation/follow-turn.js";
import { startTurn } from "../../conversation/start-turn.js";
import { finishedTurn, TurnNotFinished } from "../../conversation/finished-turn.js";
import type { HttpDeps } from "../deps.js";
import { ApiError, fromZodError, invalidRequest, modelNotFound } from "../errors.js";
import { readJsonObject } from "../read-json.js";
import { ChatCompletionRequestSchema, ConversationIdSchema } from "../schemas/chat.js";
import { openAiFinish, usageOf } from "../sse.js";
import { streamTurn } from "../stream-turn.js";
import { TranscriptError } from "../../conversation/tool-transcript.js";
import { requestTools, toolCallsJson } from "../tools.js";

/** Headers a client may name its conversation with (ARCHITECTURE.md §2). */
const CONVERSATION_HEADERS = ["x-psyche-conversation", "x-openwebui-chat-id"];

export function chatCompletionRoutes(deps: HttpDeps): Hono {
  const app = new Hono();

  app.post("/v1/chat/completions", async (c) => {
    const body = await readJsonObject(c);
    const parsed = ChatCompletionRequestSchema.safeParse(body);
    if (!parsed.success) throw fromZodError(parsed.error);
    const req = parsed.data;
    const { tools, toolChoice } = requestTools(req);
    if (req.model !== deps.modelId) throw modelNotFound(req.model, deps.modelId);
    const maxTokens = req.max_completion_tokens ?? req.max_tokens ?? deps.maxTokens;
    if (maxTokens > deps.maxTokens) {
      throw invalidRequest(`max_tokens is ${maxTokens}, above this server's limit of ${deps.maxTokens} (PSYCHE_MAX_TOKENS)`, "max_tokens");
    }
    const rawId = CONVERSATION_HEADERS.map((h) => c.req.header(h)).find((v) => v !== undefined) ?? req.metadata?.conversation_id;
    let conversationId: string | undefined;
    if (rawId !== undefined) {
      const id = ConversationIdSchema.safeParse(rawId);
      if (!id.success) throw invalidRequest(`Invalid conversation id: ${id.error.issues[0]?.message}`, "conversation_id");
      conversationId = id.data;
    }

    // Follow before the turn exists, so its first signal cannot be missed.
    const follower = new TurnFollower(deps, randomUUID());
    const started = await startTurn(deps, {
      turnId: follower.turnId,
      conversationId,
      messages: req.messages.map((m) => ({
        role: m.role === "developer" ? "system" : m.role,
        content: m.content,
        name: "name" in m ? m.name : undefined,
        toolCalls: "tool_calls" in m ? m.tool_calls?.map((tc) => ({ id: tc.id, name: tc.function.name, arguments: tc.function.arguments })) : undefined,
        toolCallId: "tool_call_id" in m ? m.tool_call_id : undefined,
      })),
      tools,
      toolChoice,
      parallelToolCalls: req.parallel_tool_calls ?? null,
      model: req.model,
      temperature: req.temperature ?? null,
      topP: req.top_p ?? null,
      maxTokens,
      seed: req.seed ?? null,
      stop: req.stop === undefined || req.stop === null ? [] : typeof req.stop === "string" ? [req.stop] : req.stop,
      stream: req.stream ?? false,
    }).catch((err: unknown) => {
      follower.close();
      if (err instanceof TranscriptError) throw invalidRequest(err.message, "messages", "invalid_tool_message");
      throw err;
    });
    c.header("X-Psyche-Conversation", started.conversationId);
    c.header("X-Psyche-Turn", started.turnId);
    const base = { id: `chatcmpl-${started.turnId}`, created: Math.floor(Date.now() / 1000), model: req.model };

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
    const turn = await finishedTurn(deps, follower, c.req.raw.signal).catch((err: unknown) => {
      if (err instanceof TurnNotFinished) throw new ApiError(500, "server_error", err.message, { code: "generation_failed" });
      throw err;
    });
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
      usage: usageOf(turn.prompt_tokens, turn.completion_tokens),
      psyche: {
        conversation_id: started.conversationId,
        turn_id: started.turnId,
        ...(turn.tool_calls?.some((tc) => tc.problems.length) ? { tool_call_problems: Object.fromEntries(turn.tool_calls.map((tc) => [tc.id, tc.problems])) } : {}),
      },
    });
  });

  return app;
}

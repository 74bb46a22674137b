// A chat completions request as a turn request (conversation/turn-request.ts): the one place the
// chat API's fields are read. Pure: the body and the headers in, the turn request and what the
// reply needs out; the route does the rest (http/routes/chat-completions.ts).
import { type ConversationRef, type TurnRequest } from "../../conversation/turn-request.js";
import { ConversationIdSchema } from "../../conversation-id.js";
import { TURN_PURPOSES, type TurnPurpose } from "../../db/sql/turns.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { requestTools } from "../../tools/request-tools.js";
import { requestResponseFormat } from "../../tools/response-format.js";
import { fieldsToIgnore, withoutFields } from "../request-fields.js";
import { effortThinking } from "../thinking.js";
import { CHAT_NOT_HONOURED, ChatCompletionRequestSchema, type ChatMessage } from "../schemas/chat.js";

/** A request's headers by (lower-case) name. */
export type HeaderOf = (name: string) => string | undefined;

export interface TranslateOptions {
  /** --strict-params: unknown fields are refused, not ignored. */
  strict: boolean;
  /** The scope the request is in (http/request-scope.ts). */
  scope: string;
}

export interface ChatTranslation {
  request: TurnRequest;
  /** Fields ignored, to name in X-Psyche-Ignored-Fields. */
  ignored: string[];
  /** How the reply is sent: as a stream (with a usage chunk, when asked), or whole. */
  reply: { stream: boolean; includeUsage: boolean };
}

/** Headers a client may name its conversation with (docs/api.md). */
export const CONVERSATION_HEADERS = ["x-psyche-conversation", "x-openwebui-chat-id"];

/**
 * OpenCode's session (its `x-session-id` header, "ses_<id>") as a conversation id, for a request
 * of its session's loop: those offer its tools. Its title and summary requests offer none and
 * carry the same header; named, their own system prompt and messages would open or join the
 * session's transcript, so they stay conversations of their own. Identity comes from the header,
 * never from the transcript (ARCHITECTURE §2).
 */
export function openCodeConversation(sessionHeader: string | undefined, offersTools: boolean): string | undefined {
  return offersTools && sessionHeader && /^ses_[A-Za-z0-9]{1,100}$/.test(sessionHeader) ? `opencode-${sessionHeader}` : undefined;
}

/** X-Psyche-Purpose: why the turn is asked for (chat, the default, or exploration). */
export function turnPurpose(header: string | undefined): TurnPurpose {
  if (header === undefined) return "chat";
  const value = header.trim().toLowerCase();
  if (!(TURN_PURPOSES as readonly string[]).includes(value))
    throw invalidRequest(
      `X-Psyche-Purpose must be one of ${TURN_PURPOSES.join(", ")}, not ${JSON.stringify(header.slice(0, 40))}`,
      "X-Psyche-Purpose",
    );
  return value as TurnPurpose;
}

/** A conversation named by `raw` (checked), or a conversation of its own. */
export function namedConversation(raw: string | undefined, param: string): ConversationRef {
  if (raw === undefined) return { kind: "own" };
  const id = ConversationIdSchema.safeParse(raw);
  if (!id.success) throw invalidRequest(`Invalid conversation id: ${id.error.issues[0]?.message}`, param);
  return { kind: "named", id: id.data };
}

/** `stop` as the APIs carry it (none, one string, or a list) as a list. */
export const stopList = (stop: string | readonly string[] | null | undefined): string[] =>
  stop === undefined || stop === null ? [] : typeof stop === "string" ? [stop] : [...stop];

/** The chat API's messages as a conversation's: developer messages are system messages. */
export function chatMessages(messages: readonly ChatMessage[]): TurnRequest["messages"] {
  return messages.map((m) => ({
    role: m.role === "developer" ? "system" : m.role,
    content: m.content,
    name: "name" in m ? m.name : undefined,
    toolCalls:
      "tool_calls" in m ? m.tool_calls?.map((tc) => ({ id: tc.id, name: tc.function.name, arguments: tc.function.arguments })) : undefined,
    toolCallId: "tool_call_id" in m ? m.tool_call_id : undefined,
  }));
}

export function chatRequest(body: Record<string, unknown>, header: HeaderOf, o: TranslateOptions): ChatTranslation {
  const ignored = fieldsToIgnore(body, { known: ChatCompletionRequestSchema.shape, notHonoured: CHAT_NOT_HONOURED }, o.strict);
  const parsed = ChatCompletionRequestSchema.safeParse(withoutFields(body, ignored));
  if (!parsed.success) throw fromZodError(parsed.error);
  const req = parsed.data;
  const { tools, toolChoice } = requestTools(req);
  const named =
    CONVERSATION_HEADERS.map(header).find((v) => v !== undefined) ??
    req.metadata?.conversation_id ??
    openCodeConversation(header("x-session-id"), (tools?.length ?? 0) > 0);
  const request: TurnRequest = {
    model: req.model,
    messages: chatMessages(req.messages),
    tools,
    toolChoice,
    parallelToolCalls: req.parallel_tool_calls ?? null,
    responseFormat: requestResponseFormat(req.response_format, tools !== null && toolChoice !== "none"),
    sampling: {
      temperature: req.temperature ?? null,
      topP: req.top_p ?? null,
      topK: null,
      seed: req.seed ?? null,
      stop: stopList(req.stop),
      presencePenalty: req.presence_penalty ?? null,
      frequencyPenalty: req.frequency_penalty ?? null,
      logitBias: req.logit_bias ?? null,
    },
    budget: {
      maxTokens: req.max_completion_tokens ?? req.max_tokens ?? null,
      field: req.max_completion_tokens ? "max_completion_tokens" : "max_tokens",
    },
    instructions: null,
    thinking: effortThinking(req.reasoning_effort, "reasoning_effort"),
    conversation: namedConversation(named, "conversation_id"),
    scope: o.scope,
    purpose: turnPurpose(header("x-psyche-purpose")),
    stream: req.stream ?? false,
  };
  return { request, ignored, reply: { stream: req.stream ?? false, includeUsage: req.stream_options?.include_usage ?? false } };
}

// A Responses API request as a turn request (conversation/turn-request.ts): input items become
// the conversation's messages (http/responses/input-items.ts) and are kept beside the turn,
// previous_response_id names the turn it continues. Pure: the body and the headers in.
import type { ConversationRef, TurnRequest } from "../../conversation/turn-request.js";
import { turnIdOf } from "../../conversation/response-ids.js";
import { fromZodError, invalidRequest, UserError } from "../../errors.js";
import { requestTools } from "../../tools/request-tools.js";
import { requestResponseFormat } from "../../tools/response-format.js";
import { type HeaderOf, namedConversation, type TranslateOptions } from "../chat/translate.js";
import { effortThinking } from "../thinking.js";
import { fieldsToIgnore, withoutFields } from "../request-fields.js";
import { RESPONSES_NOT_HONOURED, type ResponsesRequest, ResponsesRequestSchema } from "../schemas/responses.js";
import { itemsToMessages, storedInputItems } from "./input-items.js";

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

/**
 * Codex's newer models are sent their tools in the input, as `additional_tools` items (a
 * developer's list, namespaces of functions among them), not in `tools`: the items are taken
 * out, named, and their tools join the request's, where the ones that are not functions are
 * ignored and named as there (withoutOtherTools).
 */
function liftAdditionalTools(body: Record<string, unknown>): { body: Record<string, unknown>; dropped: string[] } {
  if (!Array.isArray(body.input)) return { body, dropped: [] };
  const isLifted = (item: unknown) => typeof item === "object" && item !== null && (item as { type?: unknown }).type === "additional_tools";
  const lifted = body.input.filter(isLifted) as { tools?: unknown }[];
  if (!lifted.length) return { body, dropped: [] };
  const tools = [
    ...(Array.isArray(body.tools) ? body.tools : []),
    ...lifted.flatMap((item) => (Array.isArray(item.tools) ? item.tools : [])),
  ];
  return { body: { ...body, input: body.input.filter((item) => !isLifted(item)), tools }, dropped: ["input:additional_tools"] };
}

/** Codex's `session-id` header (a UUID) as a conversation id. */
function codexConversation(header: string | undefined): string | undefined {
  return header && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(header)
    ? `codex-${header.toLowerCase()}`
    : undefined;
}

export interface ResponsesTranslation {
  request: TurnRequest;
  /** Fields (and tools of other types) ignored, to name in X-Psyche-Ignored-Fields. */
  ignored: string[];
}

export function responsesRequest(body: Record<string, unknown>, header: HeaderOf, o: TranslateOptions): ResponsesTranslation {
  const ignored = fieldsToIgnore(body, { known: ResponsesRequestSchema.shape, notHonoured: RESPONSES_NOT_HONOURED }, o.strict);
  const lifted = o.strict ? { body, dropped: [] } : liftAdditionalTools(body);
  const { body: functionsOnly, dropped } = o.strict ? lifted : withoutOtherTools(lifted.body);
  const parsed = ResponsesRequestSchema.safeParse(withoutFields(functionsOnly, ignored));
  if (!parsed.success) throw fromZodError(parsed.error);
  const req = parsed.data;
  const { tools, toolChoice, responseFormat } = toolsAndFormat(req);
  const items = storedInputItems(req.input);
  const messages = itemsToMessages(items);
  if (messages.length === 0) throw invalidRequest("input must hold at least one item", "input");
  const named = typeof req.conversation === "object" && req.conversation !== null ? req.conversation.id : (req.conversation ?? undefined);
  // Codex names its session in a header: one session, one conversation (ARCHITECTURE §2: named, never guessed).
  const conversation: ConversationRef = req.previous_response_id
    ? { kind: "after", turnId: turnIdOf(req.previous_response_id) }
    : namedConversation(named ?? codexConversation(header("session-id")), "conversation");
  const request: TurnRequest = {
    model: req.model,
    messages,
    tools,
    toolChoice,
    parallelToolCalls: req.parallel_tool_calls ?? null,
    responseFormat,
    sampling: {
      temperature: req.temperature ?? null,
      topP: req.top_p ?? null,
      topK: null,
      seed: req.seed ?? null,
      stop: [],
      presencePenalty: req.presence_penalty ?? null,
      frequencyPenalty: req.frequency_penalty ?? null,
      logitBias: req.logit_bias ?? null,
    },
    budget: { maxTokens: req.max_output_tokens ?? null, field: "max_output_tokens" },
    instructions: req.instructions ?? null,
    thinking: effortThinking(req.reasoning?.effort, "reasoning"),
    conversation,
    scope: o.scope,
    purpose: "chat",
    stream: req.stream ?? false,
    record: { items, store: req.store ?? true, metadata: req.metadata ?? null },
  };
  // A hint of how long to answer: the model writes as it writes, and the hint is named.
  const hints = req.text?.verbosity ? ["text.verbosity"] : [];
  return { request, ignored: [...ignored, ...lifted.dropped, ...dropped, ...hints] };
}

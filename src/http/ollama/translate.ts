// Ollama's /api/chat and /api/generate as turn requests (conversation/turn-request.ts): the one
// place Ollama's fields are read. Pure, as http/chat/translate.ts is: the body and headers in,
// the turn request and what the reply needs out.
import { type TurnRequest, turnRequest } from "../../conversation/turn-request.js";
import type { CompletionRequest } from "../../conversation/open-completion.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { requestTools } from "../../tools/request-tools.js";
import { requestResponseFormat } from "../../tools/response-format.js";
import type { ToolCall } from "../../tools/types.js";
import { CONVERSATION_HEADERS, type HeaderOf, namedConversation, stopList, type TranslateOptions, turnPurpose } from "../chat/translate.js";
import { fieldsToIgnore, withoutFields } from "../request-fields.js";
import { effortThinking } from "../thinking.js";
import {
  OLLAMA_NOT_HONOURED,
  OllamaChatRequestSchema,
  OllamaGenerateRequestSchema,
  type OllamaMessage,
  OllamaOptionsSchema,
} from "../schemas/ollama.js";
import type { z } from "zod";

export interface OllamaTranslation {
  /** Null: nothing to generate (no messages, or an empty prompt): Ollama's way to load a model, answered at once. */
  request: TurnRequest | null;
  /** Instead of a turn: a raw prompt, or one with a suffix, completed as it is (conversation/open-completion.ts). */
  completion?: CompletionRequest | undefined;
  ignored: string[];
  stream: boolean;
}

/** The options Psyche reads; the rest of Ollama's runner options are named as ignored. */
const READ_OPTIONS = new Set(Object.keys(OllamaOptionsSchema.shape));

/** The id of the `j`th call of the transcript's `i`th message, where the client sent none (Ollama's calls often have none). */
export const transcriptCallId = (i: number, j: number) => `call_${i}_${j}`;

function callArguments(args: Record<string, unknown> | string | undefined, at: string): string {
  if (args === undefined) return "{}";
  if (typeof args !== "string") return JSON.stringify(args);
  try {
    const v: unknown = JSON.parse(args);
    if (typeof v === "object" && v !== null && !Array.isArray(v)) return args;
  } catch {
    // refused below
  }
  throw invalidRequest(`${at}: arguments must be a JSON object`, at);
}

/**
 * Ollama's messages as a conversation's. A tool message names its call by tool_call_id where
 * the client kept it; otherwise by tool_name, or else in order, among the calls of the
 * assistant message before it that are not yet answered.
 */
export function ollamaMessages(messages: readonly OllamaMessage[]): TurnRequest["messages"] {
  let open: ToolCall[] = [];
  return messages.map((m, i) => {
    if (m.role === "assistant") {
      const toolCalls = (m.tool_calls ?? []).map((tc, j) => ({
        id: tc.id || transcriptCallId(i, j),
        name: tc.function.name,
        arguments: callArguments(tc.function.arguments, `messages[${i}].tool_calls[${j}].function.arguments`),
      }));
      open = [...toolCalls];
      return { role: "assistant", content: m.content, toolCalls: toolCalls.length ? toolCalls : undefined };
    }
    if (m.role === "tool") {
      const answered =
        (m.tool_call_id ? open.find((c) => c.id === m.tool_call_id) : undefined) ??
        (m.tool_name ? open.find((c) => c.name === m.tool_name) : undefined) ??
        open[0];
      const toolCallId = m.tool_call_id ?? answered?.id;
      if (!toolCallId)
        throw invalidRequest(`messages[${i}]: a tool message must answer a call of the assistant message before it`, `messages[${i}]`);
      open = open.filter((c) => c !== answered);
      return { role: "tool", content: m.content, toolCallId };
    }
    return { role: m.role, content: m.content };
  });
}

type Options = z.infer<typeof OllamaOptionsSchema>;

/** The sampling options, the reply budget, and the names of options not honoured (as "options.<name>"). */
function readOptions(options: Options | null | undefined): Pick<TurnRequest, "sampling" | "budget"> & { ignored: string[] } {
  const o = options ?? {};
  return {
    sampling: {
      temperature: o.temperature ?? null,
      topP: o.top_p ?? null,
      topK: o.top_k ?? null,
      seed: o.seed ?? null,
      stop: stopList(o.stop),
      presencePenalty: o.presence_penalty ?? null,
      frequencyPenalty: o.frequency_penalty ?? null,
      logitBias: null,
    },
    budget: { maxTokens: o.num_predict && o.num_predict > 0 ? o.num_predict : null, field: "options.num_predict" },
    ignored: Object.keys(o)
      .filter((k) => !READ_OPTIONS.has(k) && (o as Record<string, unknown>)[k] !== undefined)
      .map((k) => `options.${k}`),
  };
}

/** `think` as a thought budget: false turns thinking off, true leaves the family's default, a level is an effort. */
function ollamaThinking(think: boolean | "low" | "medium" | "high" | null | undefined): TurnRequest["thinking"] {
  if (think === null || think === undefined) return null;
  if (typeof think === "string") return effortThinking(think, "think");
  return { budget: think ? null : 0, field: "think", effort: null };
}

function ollamaFormat(format: string | Record<string, unknown> | null | undefined, toolsOffered: boolean): TurnRequest["responseFormat"] {
  if (!format) return null;
  if (typeof format === "string" && format !== "json") throw invalidRequest('format must be "json" or a JSON schema object', "format");
  // Ollama holds a reply to the schema as best its grammar can, and does not refuse keywords it
  // cannot enforce: strict false has the rest checked afterwards (tools/response-format.ts).
  return requestResponseFormat(
    typeof format === "string"
      ? { type: "json_object" }
      : { type: "json_schema", json_schema: { name: "format", schema: format, strict: false } },
    toolsOffered,
    "format",
  );
}

function parse<S extends z.ZodType>(schema: S & { shape: Record<string, unknown> }, body: Record<string, unknown>, strict: boolean) {
  const ignored = fieldsToIgnore(body, { known: schema.shape, notHonoured: OLLAMA_NOT_HONOURED }, strict);
  const parsed = schema.safeParse(withoutFields(body, ignored));
  if (!parsed.success) throw fromZodError(parsed.error);
  return { req: parsed.data as z.infer<S>, ignored };
}

const conversationOf = (header: HeaderOf) =>
  namedConversation(
    CONVERSATION_HEADERS.map(header).find((v) => v !== undefined),
    "X-Psyche-Conversation",
  );

export function ollamaChatRequest(body: Record<string, unknown>, header: HeaderOf, o: TranslateOptions): OllamaTranslation {
  const { req, ignored } = parse(OllamaChatRequestSchema, { messages: [], ...body }, o.strict);
  const stream = req.stream ?? true;
  if (!req.messages.length) return { request: null, ignored, stream };
  const { tools } = requestTools({ tools: req.tools });
  const options = readOptions(req.options);
  const request = turnRequest({
    model: req.model,
    messages: ollamaMessages(req.messages),
    tools,
    responseFormat: ollamaFormat(req.format, tools !== null),
    sampling: options.sampling,
    budget: options.budget,
    thinking: ollamaThinking(req.think),
    conversation: conversationOf(header),
    scope: o.scope,
    purpose: turnPurpose(header("x-psyche-purpose")),
    stream,
  });
  return { request, ignored: [...ignored, ...options.ignored], stream };
}

/**
 * /api/generate as a turn of its own: the system message and the prompt, through the model's
 * template and the persona, as Ollama renders them. A raw prompt or a suffix (text completion,
 * fill-in-the-middle) is not a conversation: it is completed as it is, as on /v1/completions.
 */
export function ollamaGenerateRequest(body: Record<string, unknown>, header: HeaderOf, o: TranslateOptions): OllamaTranslation {
  const { req, ignored } = parse(OllamaGenerateRequestSchema, body, o.strict);
  const stream = req.stream ?? true;
  if (!req.prompt) return { request: null, ignored, stream };
  const options = readOptions(req.options);
  if (req.raw || req.suffix) {
    if (req.format)
      throw invalidRequest("format cannot be combined with raw or suffix on this server: a text completion has no format", "format");
    const unread = [...(req.system ? ["system"] : []), ...(req.think !== undefined && req.think !== null ? ["think"] : [])];
    return {
      request: null,
      completion: {
        model: req.model,
        prompt: req.prompt,
        suffix: req.suffix || null,
        sampling: options.sampling,
        budget: options.budget,
        stream,
      },
      ignored: [...ignored, ...options.ignored, ...unread, ...(req.context?.length ? ["context"] : [])],
      stream,
    };
  }
  const request = turnRequest({
    model: req.model,
    messages: [...(req.system ? [{ role: "system" as const, content: req.system }] : []), { role: "user", content: req.prompt }],
    responseFormat: ollamaFormat(req.format, false),
    sampling: options.sampling,
    budget: options.budget,
    thinking: ollamaThinking(req.think),
    conversation: conversationOf(header),
    scope: o.scope,
    purpose: turnPurpose(header("x-psyche-purpose")),
    stream,
  });
  return { request, ignored: [...ignored, ...options.ignored, ...(req.context?.length ? ["context"] : [])], stream };
}

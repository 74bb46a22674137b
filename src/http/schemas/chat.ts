// POST /v1/chat/completions, as OpenAI defines it, for the parts Psyche serves.
import { z } from "zod";
import {
  functionName,
  JsonObjectStringSchema,
  LogitBiasSchema,
  PenaltySchema,
  ToolChoiceSchema,
  ToolDefinitionSchema,
} from "../../tools/schemas.js";
import { ResponseFormatSchema } from "../../tools/response-format.js";
import { ReasoningEffortSchema } from "../thinking.js";

const TextPartSchema = z.object({ type: z.literal("text"), text: z.string() });
const ContentPartSchema = z.union([
  TextPartSchema,
  z
    .object({ type: z.string() })
    .passthrough()
    .refine(() => false, { message: "only text content parts are supported by this server" }),
]);

/** A message's content: a string, or text parts (joined). */
const ContentSchema = z
  .union([z.string(), z.array(ContentPartSchema).min(1)])
  .transform((c) => (typeof c === "string" ? c : c.map((p) => ("text" in p ? String(p.text) : "")).join("")));

const name = z.string().max(256).optional();

/** A call the assistant made, as a client sends it back. */
const ToolCallSchema = z.object({
  id: z.string().min(1).max(128),
  type: z.literal("function"),
  function: z.object({
    name: functionName,
    arguments: JsonObjectStringSchema,
  }),
});

export const ChatMessageSchema = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.literal("system"), content: ContentSchema, name }),
    z.object({ role: z.literal("developer"), content: ContentSchema, name }),
    z.object({ role: z.literal("user"), content: ContentSchema, name }),
    z.object({
      role: z.literal("assistant"),
      content: ContentSchema.nullish().transform((c) => c ?? ""),
      name,
      tool_calls: z.array(ToolCallSchema).max(64).nullish(),
    }),
    z.object({
      role: z.literal("tool"),
      content: ContentSchema,
      tool_call_id: z.string({ error: "tool messages need the tool_call_id they answer" }).min(1).max(128),
    }),
  ],
  { error: () => "role must be one of system, developer, user, assistant, tool" },
);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const ChatCompletionRequestSchema = z.object({
  model: z.string({ error: "model is required" }).min(1, "model is required"),
  messages: z.array(ChatMessageSchema, { error: "messages must be an array of messages" }).min(1, "messages must not be empty"),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  reasoning_effort: ReasoningEffortSchema.nullish(),
  stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(4)]).nullish(),
  seed: z.number().int().nullish(),
  n: z.literal(1, { error: "n must be 1: this server generates one choice per request" }).nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  // Accepted because they cannot change the reply (docs/api.md, "What each field does").
  user: z.string().optional(),
  store: z.boolean().nullish(),
  service_tier: z.string().nullish(),
  prompt_cache_key: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  modalities: z.array(z.literal("text", { error: "modalities: this server writes text only" })).nullish(),
  tools: z.array(ToolDefinitionSchema).max(128).nullish(),
  tool_choice: ToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: ResponseFormatSchema.nullish(),
  presence_penalty: PenaltySchema.nullish(),
  frequency_penalty: PenaltySchema.nullish(),
  logit_bias: LogitBiasSchema.nullish(),
  // node-llama-cpp's chat generation gives no token probabilities (inference/llama-engine.ts).
  logprobs: z.literal(false, { error: "logprobs are not available from this server: its engine gives no token probabilities" }).nullish(),
  top_logprobs: z
    .literal(0, { error: "top_logprobs are not available from this server: its engine gives no token probabilities" })
    .nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

/** Fields OpenAI defines that this server cannot honour, and why: a 400 names them (http/request-fields.ts). */
export const CHAT_NOT_HONOURED: Record<string, string> = {
  audio: "audio output is not available: this server writes text",
  prediction: "predicted outputs are not available on this server",
  web_search_options: "web search is not available on this server",
  functions: "functions is OpenAI's deprecated form: send tools",
  function_call: "function_call is OpenAI's deprecated form: send tool_choice",
};

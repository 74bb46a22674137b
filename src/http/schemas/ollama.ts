// Ollama's native API (/api/*), as Ollama's own server and the `ollama` library define it, for
// the parts Psyche serves (docs/api.md, "Ollama's API"). Fields are read loosely where Ollama's
// own server is loose: `options` holds any of Ollama's runner options, and those Psyche cannot
// honour are named as ignored (http/ollama/translate.ts).
import { z } from "zod";
import { functionName } from "../../tools/schemas.js";

const model = z.string({ error: "model is required" }).min(1, "model is required");

/** A call as Ollama carries it: the arguments an object, not a string. */
const OllamaToolCallSchema = z.object({
  id: z.string().max(128).optional(),
  function: z.object({
    index: z.number().int().optional(),
    name: functionName,
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
  }),
});

export const OllamaMessageSchema = z.object({
  role: z.enum(["system", "user", "assistant", "tool"], { error: "role must be one of system, user, assistant, tool" }),
  content: z
    .string()
    .nullish()
    .transform((c) => c ?? ""),
  thinking: z.string().nullish(),
  images: z
    .array(z.unknown())
    .nullish()
    .refine((i) => !i?.length, "images are not supported: the model this server runs reads text only"),
  tool_calls: z.array(OllamaToolCallSchema).max(64).nullish(),
  tool_name: z.string().max(256).nullish(),
  tool_call_id: z.string().max(128).nullish(),
});
export type OllamaMessage = z.infer<typeof OllamaMessageSchema>;

export const OllamaToolSchema = z.object({
  type: z.literal("function", { error: "only function tools are supported" }),
  function: z.object({
    name: functionName,
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** `format`: "json", or a JSON schema the reply must meet ("" is no format, as Ollama reads it). */
export const OllamaFormatSchema = z.union([z.literal("json"), z.literal(""), z.record(z.string(), z.unknown())], {
  error: 'format must be "json" or a JSON schema object',
});

/** `think`: on, off, or a level (gpt-oss's). */
export const OllamaThinkSchema = z.union([z.boolean(), z.enum(["low", "medium", "high"])], {
  error: 'think must be true, false, "low", "medium" or "high"',
});

/** Ollama's runner options; the ones Psyche reads are checked, the rest kept to be named. */
export const OllamaOptionsSchema = z
  .object({
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    top_k: z.number().int().nonnegative().nullish(),
    seed: z.number().int().nullish(),
    stop: z.union([z.string().min(1), z.array(z.string().min(1)).max(16)]).nullish(),
    // -1: no limit, -2: fill the context; both are the server's budget here.
    num_predict: z.number().int().min(-2).nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
  })
  .passthrough();

const keepAlive = z.union([z.string(), z.number()]).nullish();

export const OllamaChatRequestSchema = z.object({
  model,
  // None: Ollama's way to load the model, answered at once (http/ollama/translate.ts).
  messages: z.array(OllamaMessageSchema, { error: "messages must be an array of messages" }),
  tools: z.array(OllamaToolSchema).max(128).nullish(),
  format: OllamaFormatSchema.nullish(),
  options: OllamaOptionsSchema.nullish(),
  stream: z.boolean().nullish(),
  keep_alive: keepAlive,
  think: OllamaThinkSchema.nullish(),
  logprobs: z.literal(false, { error: "logprobs are not available from this server: its engine gives no token probabilities" }).nullish(),
  top_logprobs: z.literal(0, { error: "top_logprobs are not available from this server" }).nullish(),
});
export type OllamaChatRequest = z.infer<typeof OllamaChatRequestSchema>;

export const OllamaGenerateRequestSchema = z.object({
  model,
  prompt: z.string().nullish(),
  system: z.string().nullish(),
  suffix: z.string().nullish(),
  raw: z.boolean().nullish(),
  format: OllamaFormatSchema.nullish(),
  options: OllamaOptionsSchema.nullish(),
  stream: z.boolean().nullish(),
  keep_alive: keepAlive,
  think: OllamaThinkSchema.nullish(),
  // The tokens of an earlier /api/generate; Psyche keeps conversations itself (docs/api.md).
  context: z.array(z.number()).nullish(),
  images: z
    .array(z.unknown())
    .nullish()
    .refine((i) => !i?.length, "images are not supported: the model this server runs reads text only"),
  logprobs: z.literal(false, { error: "logprobs are not available from this server: its engine gives no token probabilities" }).nullish(),
  top_logprobs: z.literal(0, { error: "top_logprobs are not available from this server" }).nullish(),
});
export type OllamaGenerateRequest = z.infer<typeof OllamaGenerateRequestSchema>;

/** Fields Ollama defines that Psyche cannot honour, and why: a 400 names them. */
export const OLLAMA_NOT_HONOURED: Record<string, string> = {
  template: "a request's own prompt template is not available: the model's own chat template is used",
};

export const OllamaShowRequestSchema = z
  .object({ model: z.string().min(1).optional(), name: z.string().min(1).optional(), verbose: z.boolean().nullish() })
  .passthrough()
  .refine((b) => b.model ?? b.name, "model is required");

export const OllamaEmbedRequestSchema = z
  .object({
    model,
    input: z.union([z.string(), z.array(z.string()).min(1, "input must not be empty")], {
      error: "input must be a string or an array of strings",
    }),
    truncate: z.boolean().nullish(),
    dimensions: z.number().int().positive().nullish(),
    keep_alive: keepAlive,
    options: z.record(z.string(), z.unknown()).nullish(),
  })
  .passthrough();

export const OllamaEmbeddingsRequestSchema = z
  .object({
    model,
    prompt: z.string({ error: "prompt is required" }),
    keep_alive: keepAlive,
    options: z.record(z.string(), z.unknown()).nullish(),
  })
  .passthrough();

export const OllamaPullRequestSchema = z
  .object({
    model: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    stream: z.boolean().nullish(),
    insecure: z.boolean().nullish(),
  })
  .passthrough()
  .refine((b) => b.model ?? b.name, "model is required");

// POST /v1/responses, as OpenAI defines it, for the parts Psyche serves (docs/api.md, "The Responses
// API"). Input items become the conversation's messages in http/responses/input-items.ts.
import { z } from "zod";
import { ResponsesReasoningSchema } from "../thinking.js";
import { functionName, JsonObjectStringSchema, LogitBiasSchema, PenaltySchema } from "../../tools/schemas.js";
import { ConversationIdSchema } from "../../conversation-id.js";

const text = z.string().max(1_000_000);

/** Parts of a message's content: text only (input_text from a client, output_text echoed back). */
const ContentPartSchema = z.union([
  z.object({ type: z.enum(["input_text", "output_text"]), text }).passthrough(),
  z.object({ type: z.literal("refusal"), refusal: text }).passthrough(),
  z
    .object({ type: z.string() })
    .passthrough()
    .refine(() => false, { message: "only text content parts (input_text, output_text) are supported by this server" }),
]);

export const MessageItemSchema = z.object({
  type: z.literal("message").optional(),
  id: z.string().max(128).optional(),
  role: z.enum(["user", "assistant", "system", "developer"], { error: "role must be one of user, assistant, system, developer" }),
  content: z.union([text, z.array(ContentPartSchema).max(256)]),
  status: z.string().optional(),
});

export const FunctionCallItemSchema = z.object({
  type: z.literal("function_call"),
  id: z.string().max(128).optional(),
  call_id: z.string().min(1).max(128),
  name: functionName,
  arguments: JsonObjectStringSchema,
  status: z.string().optional(),
});

export const FunctionCallOutputItemSchema = z.object({
  type: z.literal("function_call_output"),
  id: z.string().max(128).optional(),
  call_id: z.string().min(1).max(128),
  output: z.union([text, z.array(ContentPartSchema).max(256)]),
  status: z.string().optional(),
});

/** Item types OpenAI defines that belong to tools or features this server does not have. */
const FOREIGN_ITEMS = [
  "item_reference",
  "file_search_call",
  "web_search_call",
  "computer_call",
  "computer_call_output",
  "code_interpreter_call",
  "image_generation_call",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_call",
  "mcp_list_tools",
  "mcp_approval_request",
  "mcp_approval_response",
  "custom_tool_call",
  "custom_tool_call_output",
];

/**
 * A reasoning item as a client sends back what it was given (Codex does, in its tool loops): the
 * model's own thought, already stored with its turn (migrations/000026_reasoning.sql), so it is
 * read and dropped; the family's template decides what earlier thinking the model reads again.
 */
const ReasoningItemSchema = z.object({ type: z.literal("reasoning"), id: z.string().max(128).optional() }).passthrough();

/** An input item; null for a reasoning item, which is dropped. */
const InputItemSchema = z.unknown().transform((item, ctx) => {
  const type = typeof item === "object" && item !== null ? (item as { type?: unknown }).type : undefined;
  if (type === "reasoning") {
    const parsed = ReasoningItemSchema.safeParse(item);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: "custom", message: issue.message });
    return null;
  }
  const schema =
    type === "function_call"
      ? FunctionCallItemSchema
      : type === "function_call_output"
        ? FunctionCallOutputItemSchema
        : type === undefined || type === "message"
          ? MessageItemSchema
          : undefined;
  if (!schema) {
    const why = FOREIGN_ITEMS.includes(String(type)) ? "which this server does not have" : "which is not an input item type";
    ctx.addIssue({
      code: "custom",
      message: `item type ${JSON.stringify(type)}, ${why}: send message, function_call, function_call_output (and reasoning) items`,
    });
    return z.NEVER;
  }
  const parsed = schema.safeParse(item);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  }
  return parsed.data as
    z.infer<typeof MessageItemSchema> | z.infer<typeof FunctionCallItemSchema> | z.infer<typeof FunctionCallOutputItemSchema>;
});
export type InputItem = NonNullable<z.infer<typeof InputItemSchema>>;

/** A string (one user message) or a list of items; what is wrong inside the list is named by its index. */
const InputSchema = z.unknown().transform((input, ctx) => {
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) {
    ctx.addIssue({ code: "custom", message: "input must be a string or a list of items" });
    return z.NEVER;
  }
  const parsed = z.array(InputItemSchema).min(1, "input must hold at least one item").max(4096).safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  }
  const items = parsed.data.filter((item): item is InputItem => item !== null);
  if (items.length === 0) {
    ctx.addIssue({ code: "custom", message: "input holds only reasoning items: send them with the items they came with", path: [0] });
    return z.NEVER;
  }
  return items;
});

/** A function tool in the Responses API's flat shape. */
export const ResponsesFunctionToolSchema = z.object({
  type: z.literal("function"),
  name: functionName,
  // Any length the body limit allows: coding agents describe their tools at length.
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

/** Built-in tools OpenAI hosts; none runs here. */
const HOSTED_TOOLS = [
  "web_search",
  "web_search_preview",
  "web_search_2025_08_26",
  "web_search_preview_2025_03_11",
  "file_search",
  "computer_use_preview",
  "computer_use",
  "code_interpreter",
  "image_generation",
  "mcp",
  "local_shell",
  "shell",
  "apply_patch",
  "custom",
];

const ToolSchema = z.unknown().transform((tool, ctx) => {
  const type = typeof tool === "object" && tool !== null ? (tool as { type?: unknown }).type : undefined;
  if (type !== "function") {
    const why = HOSTED_TOOLS.includes(String(type)) ? "a tool OpenAI hosts, which this server does not have" : "not a tool type";
    ctx.addIssue({ code: "custom", message: `${JSON.stringify(type)} is ${why}: only function tools are supported` });
    return z.NEVER;
  }
  const parsed = ResponsesFunctionToolSchema.safeParse(tool);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  }
  return parsed.data;
});

const ToolChoiceSchema = z.union([z.enum(["none", "auto", "required"]), z.object({ type: z.literal("function"), name: functionName })]);

export const TextFormatSchema = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({
      type: z.literal("json_schema"),
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "text.format.name must be 1 to 64 letters, digits, _ or -"),
      description: z.string().max(4096).optional(),
      schema: z.record(z.string(), z.unknown()),
      strict: z.boolean().nullish(),
    }),
  ],
  { error: () => "text.format.type must be text, json_object or json_schema" },
);

/** OpenAI's `include` values; each asks for data about items this server never makes, except logprobs. */
const IncludeSchema = z.array(
  z
    .string()
    .refine((v) => v !== "message.output_text.logprobs", "message.output_text.logprobs: this server's engine gives no token probabilities"),
);

export const ResponseIdSchema = z.string().regex(/^resp_[0-9a-f]{32}$/, "response ids are resp_ and 32 hex digits");

export const ResponsesRequestSchema = z
  .object({
    model: z.string({ error: "model is required" }).min(1, "model is required"),
    input: InputSchema,
    instructions: text.nullish(),
    max_output_tokens: z.number().int().positive().nullish(),
    reasoning: ResponsesReasoningSchema.nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    seed: z.number().int().nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, "metadata holds at most 16 keys")
      .nullish(),
    tools: z.array(ToolSchema).max(128).nullish(),
    tool_choice: ToolChoiceSchema.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    text: z
      .object({
        format: TextFormatSchema.nullish(),
        // Read to be named as ignored (http/responses/translate.ts): Codex sends it with every request.
        verbosity: z.enum(["low", "medium", "high"], { error: "text.verbosity must be low, medium or high" }).nullish(),
      })
      .strict()
      .nullish(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_obfuscation: z.boolean().optional() }).nullish(),
    previous_response_id: ResponseIdSchema.nullish(),
    /** Psyche's conversation id (OpenAI's conversation object, or its id). */
    conversation: z.union([ConversationIdSchema, z.object({ id: ConversationIdSchema })]).nullish(),
    presence_penalty: PenaltySchema.nullish(),
    frequency_penalty: PenaltySchema.nullish(),
    logit_bias: LogitBiasSchema.nullish(),
    // Accepted because they cannot change the reply (docs/api.md, "What each field does").
    include: IncludeSchema.nullish(),
    user: z.string().nullish(),
    service_tier: z.string().nullish(),
    prompt_cache_key: z.string().nullish(),
    prompt_cache_retention: z.string().nullish(),
    safety_identifier: z.string().nullish(),
    truncation: z
      .literal("disabled", { error: 'truncation: only "disabled" (the default): this server does not drop input to fit' })
      .nullish(),
    top_logprobs: z
      .literal(0, { error: "top_logprobs are not available from this server: its engine gives no token probabilities" })
      .nullish(),
  })
  .refine((r) => !(r.previous_response_id && r.conversation), {
    message: "send previous_response_id or conversation, not both",
    path: ["conversation"],
  });
export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;

/** Fields OpenAI defines that this server cannot honour, and why: a 400 names them (http/request-fields.ts). */
export const RESPONSES_NOT_HONOURED: Record<string, string> = {
  background:
    "background responses are not available on this server; Psyche keeps every response running when the client leaves, and GET /v1/responses/{id} reads it",
  max_tool_calls: "max_tool_calls is not available on this server: the client runs its own tools and decides when to stop",
  prompt: "prompt templates are not available on this server: send instructions and input",
};

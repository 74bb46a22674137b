// Anthropic's Messages API as requests carry it (POST /v1/messages, /v1/messages/count_tokens):
// what Claude Code and the Anthropic SDK send. Blocks that Psyche cannot read (images,
// documents) are a 400 naming them; what cannot change the reply (cache_control, citations)
// is accepted; thinking blocks in the history are dropped: the
// model's own thoughts are stored with its turns (migrations/000026_reasoning.sql).
import { z } from "zod";
import { AnthropicThinkingSchema } from "../thinking.js";
import { functionName } from "../../tools/schemas.js";

const cacheControl = z.unknown().optional();
export const TextBlockSchema = z.object({
  type: z.literal("text"),
  text: z.string(),
  cache_control: cacheControl,
  citations: z.unknown().optional(),
});
const ToolUseBlockSchema = z.object({
  type: z.literal("tool_use"),
  id: z.string().min(1).max(256),
  name: functionName,
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
const ToolResultBlockSchema = z.object({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1).max(256),
  content: z.union([z.string(), z.array(TextBlockSchema)]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const ThinkingBlockSchema = z.object({ type: z.enum(["thinking", "redacted_thinking"]) }).passthrough();
const ContentBlockSchema = z.discriminatedUnion("type", [TextBlockSchema, ToolUseBlockSchema, ToolResultBlockSchema, ThinkingBlockSchema], {
  error: () =>
    "content blocks are text, tool_use, tool_result (and thinking, which is dropped): images and documents are not available on this server",
});
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

export const AnthropicMessageSchema = z.object({
  // "system" mid-conversation: Claude Code 2 sends its agent list that way, after the first user message.
  role: z.enum(["user", "assistant", "system"], { error: "role must be user, assistant or system" }),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
});
export type AnthropicMessage = z.infer<typeof AnthropicMessageSchema>;

export const AnthropicToolSchema = z.object({
  name: functionName,
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
  type: z.literal("custom").optional(),
  cache_control: cacheControl,
});

const ToolChoiceSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal("none") }),
  z.object({ type: z.literal("tool"), name: functionName, disable_parallel_tool_use: z.boolean().optional() }),
]);

const messagesFields = {
  model: z.string({ error: "model is required" }).min(1, "model is required"),
  messages: z.array(AnthropicMessageSchema, { error: "messages must be an array of messages" }).min(1, "messages must not be empty"),
  system: z.union([z.string(), z.array(TextBlockSchema)]).optional(),
  // Objects with a type other than custom are Anthropic's server tools (web search, ...): set
  // apart by the route, which ignores and names them.
  tools: z.array(z.record(z.string(), z.unknown())).max(256).optional(),
  tool_choice: ToolChoiceSchema.optional(),
  metadata: z
    .object({ user_id: z.string().max(512).nullish() })
    .passthrough()
    .nullish(),
};

export const CountTokensRequestSchema = z.object(messagesFields);

export const MessagesRequestSchema = z.object({
  ...messagesFields,
  max_tokens: z.number({ error: "max_tokens is required" }).int().positive(),
  thinking: AnthropicThinkingSchema.nullish(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string().min(1)).max(16).optional(),
  stream: z.boolean().optional(),
  // Accepted because they cannot change the reply.
  service_tier: z.string().optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequestSchema>;
export type CountTokensRequest = z.infer<typeof CountTokensRequestSchema>;

/** Fields Anthropic defines that would change the reply and that this server cannot honour. */
export const MESSAGES_NOT_HONOURED: Record<string, string> = {
  mcp_servers: "MCP servers in the request are not available on this server: Psyche is an MCP server itself (/mcp)",
  container: "code-execution containers are not available on this server",
};

// A stored response in OpenAI's Response object shape, from its turn and its responses row.
import type { ResponseRow } from "../../db/sql/responses.js";
import type { ResponseFormat } from "../../tools/response-format.js";
import type { ToolChoice, ToolSpec } from "../../tools/types.js";
import { replyReport } from "../tools.js";
import { functionCallItemId, messageItemId, reasoningItemId, responseId } from "../../conversation/response-ids.js";

export type ResponseStatus = "queued" | "in_progress" | "completed" | "incomplete" | "cancelled" | "failed";

export const messageItem = (turnId: string, text: string, status: "in_progress" | "completed" = "completed") => ({
  type: "message" as const,
  id: messageItemId(turnId),
  status,
  role: "assistant" as const,
  content: status === "completed" ? [outputText(text)] : [],
});

/** The thought as a reasoning item, its text as open-weight servers return it (reasoning_text), no summary. */
export const reasoningItem = (turnId: string, text: string, status: "in_progress" | "completed" = "completed") => ({
  type: "reasoning" as const,
  id: reasoningItemId(turnId),
  status,
  summary: [],
  content: status === "completed" ? [{ type: "reasoning_text" as const, text }] : [],
});

export const outputText = (text: string) => ({ type: "output_text" as const, text, annotations: [], logprobs: [] });

export const functionCallItem = (
  call: { id: string; name: string; arguments: string },
  status: "in_progress" | "completed" = "completed",
) => ({
  type: "function_call" as const,
  id: functionCallItemId(call.id),
  call_id: call.id,
  name: call.name,
  arguments: status === "completed" ? call.arguments : "",
  status,
});

export function responseStatus(row: Pick<ResponseRow, "status" | "finish_reason">): ResponseStatus {
  switch (row.status) {
    case "queued":
      return "queued";
    case "running":
      return "in_progress";
    case "failed":
      return "failed";
    case "cancelled":
      return "cancelled";
    case "done":
      return row.finish_reason === "length" ? "incomplete" : "completed";
  }
}

/** The reply's output items: its thought where it had one, its text as a message (unless it is only tool calls), then each call. */
export function outputItems(row: Pick<ResponseRow, "id" | "content" | "reasoning" | "tool_calls" | "finish_reason">) {
  const calls = row.finish_reason === "tool_calls" ? (row.tool_calls ?? []) : [];
  const text = row.content ?? "";
  return [
    ...(row.reasoning ? [reasoningItem(row.id, row.reasoning)] : []),
    ...(text !== "" || calls.length === 0 ? [messageItem(row.id, text)] : []),
    ...calls.map((c) => functionCallItem(c)),
  ];
}

const toolJson = (t: ToolSpec) => ({
  type: "function" as const,
  name: t.name,
  description: t.description ?? null,
  parameters: t.parameters ?? null,
  strict: null,
});
const toolChoiceJson = (c: ToolChoice | null) =>
  c === null ? "auto" : typeof c === "string" ? c : { type: "function" as const, name: c.name };
const formatJson = (f: ResponseFormat | null) =>
  f === null
    ? { type: "text" }
    : f.type === "json_object"
      ? { type: "json_object" }
      : { type: "json_schema", name: f.name, schema: f.schema, strict: f.strict };

/**
 * The Response object. `live` renders it as a stream's opening events carry it (in progress,
 * no output yet), whatever the turn's state when they are sent or replayed.
 */
export function responseObject(row: ResponseRow, live = false) {
  const status: ResponseStatus = live ? "in_progress" : responseStatus(row);
  const finished = status !== "queued" && status !== "in_progress";
  return {
    id: responseId(row.id),
    object: "response" as const,
    created_at: Math.floor(row.created_at.getTime() / 1000),
    status,
    background: false,
    error: status === "failed" ? { code: "server_error", message: row.error ?? "the response failed" } : null,
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: row.instructions,
    max_output_tokens: row.max_tokens,
    model: row.model,
    output: finished && status !== "failed" ? outputItems(row) : [],
    parallel_tool_calls: row.parallel_tool_calls ?? true,
    previous_response_id: row.previous_turn_id ? responseId(row.previous_turn_id) : null,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: row.store,
    temperature: row.temperature,
    text: { format: formatJson(row.response_format) },
    tool_choice: toolChoiceJson(row.tool_choice),
    tools: (row.tools ?? []).map(toolJson),
    top_p: row.top_p,
    truncation: "disabled",
    usage: finished
      ? {
          input_tokens: row.prompt_tokens ?? 0,
          input_tokens_details: { cached_tokens: row.cached_tokens ?? 0 },
          output_tokens: row.completion_tokens ?? 0,
          output_tokens_details: { reasoning_tokens: row.reasoning_tokens ?? 0 },
          total_tokens: (row.prompt_tokens ?? 0) + (row.completion_tokens ?? 0),
        }
      : null,
    user: null,
    metadata: row.metadata ?? {},
    psyche: { conversation_id: row.conversation_id, turn_id: row.id, ...(finished ? replyReport(row) : {}) },
  };
}

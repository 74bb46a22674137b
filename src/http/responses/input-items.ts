// The Responses API's input items, as stored with a response (for GET .../input_items) and as
// the conversation's messages they become: a message item is a message; function_call items
// join the assistant message before them (or open one); a function_call_output is a tool message.
import { randomBytes } from "node:crypto";
import type { NewMessage } from "../../db/sql/conversations.js";
import type { StoredInputItem } from "../../db/sql/responses.js";
import type { InputItem } from "../schemas/responses.js";

/** An item id in OpenAI's form: a prefix and 48 hex digits. */
export const itemId = (prefix: string) => `${prefix}_${randomBytes(24).toString("hex")}`;

const partsText = (content: string | readonly ({ text?: string; refusal?: string } & Record<string, unknown>)[]) =>
  typeof content === "string"
    ? content
    : content.map((p) => (typeof p.text === "string" ? p.text : typeof p.refusal === "string" ? p.refusal : "")).join("");

/** The request's `input` as items with ids: a string is one user message. */
export function storedInputItems(input: string | readonly InputItem[]): StoredInputItem[] {
  if (typeof input === "string")
    return [{ type: "message", id: itemId("msg"), role: "user", status: "completed", content: [{ type: "input_text", text: input }] }];
  return input.map((item): StoredInputItem => {
    if (item.type === "function_call")
      return {
        type: "function_call",
        id: item.id ?? itemId("fc"),
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        status: "completed",
      };
    if (item.type === "function_call_output")
      return {
        type: "function_call_output",
        id: item.id ?? itemId("fco"),
        call_id: item.call_id,
        output: partsText(item.output),
        status: "completed",
      };
    return {
      type: "message",
      id: item.id ?? itemId("msg"),
      role: item.role,
      status: "completed",
      content: [{ type: item.role === "assistant" ? "output_text" : "input_text", text: partsText(item.content) }],
    };
  });
}

/** The conversation messages the items stand for, in order. */
export function itemsToMessages(items: readonly StoredInputItem[]): NewMessage[] {
  const messages: NewMessage[] = [];
  for (const item of items) {
    if (item.type === "function_call") {
      const last = messages.at(-1);
      const call = { id: item.call_id, name: item.name, arguments: item.arguments };
      if (last?.role === "assistant") last.toolCalls = [...(last.toolCalls ?? []), call];
      else messages.push({ role: "assistant", content: "", toolCalls: [call] });
    } else if (item.type === "function_call_output") {
      messages.push({ role: "tool", content: item.output, toolCallId: item.call_id });
    } else {
      messages.push({ role: item.role === "developer" ? "system" : item.role, content: item.content.map((p) => p.text).join("") });
    }
  }
  return messages;
}

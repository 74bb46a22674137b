// What an MCP tool answers: structured content with a text rendering, or an `isError` result
// whose text tells the calling model what went wrong and what to do instead.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { UserError } from "../errors.js";
import type { Logger } from "../log.js";

/** Dates become ISO strings, as they would on the wire: structured content is plain JSON. */
export const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export function result(structured: Record<string, unknown>, text?: string): CallToolResult {
  const content = plain(structured);
  return { content: [{ type: "text", text: text ?? JSON.stringify(content, null, 2) }], structuredContent: content };
}

export function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** A UserError keeps its message (prefixed when the fault is on Psyche's side); anything else is logged and summarised. */
export function failureFor(err: unknown, tool: string, log: Logger): CallToolResult {
  if (err instanceof UserError && err.status < 500) return failure(err.message);
  log.error({ err, tool }, "MCP tool failed");
  if (err instanceof UserError) return failure(`${tool} could not finish: ${err.message}`);
  return failure(`${tool} failed inside Psyche: ${(err as Error).message ?? String(err)}. The server log has the details.`);
}

/** Wraps a tool body so that any failure comes back as an `isError` result. */
export function guarded<A, E>(
  tool: string,
  log: Logger,
  body: (args: A, extra: E) => Promise<CallToolResult>,
): (args: A, extra: E) => Promise<CallToolResult> {
  return async (args, extra) => {
    try {
      return await body(args, extra);
    } catch (err) {
      return failureFor(err, tool, log);
    }
  };
}

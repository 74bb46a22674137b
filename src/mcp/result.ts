// What an MCP tool answers: structured content with a text rendering, or an `isError` result
// whose text tells the calling model what went wrong and what to do instead.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ConversationNotFound } from "../conversation/add-tool-result.js";
import { TurnNotFinished } from "../conversation/finished-turn.js";
import { TranscriptError } from "../conversation/tool-transcript.js";
import { ApiError } from "../http/errors.js";
import type { Logger } from "../log.js";
import { EmbedderError } from "../memory/embedder.js";

/** Dates become ISO strings, as they would on the wire: structured content is plain JSON. */
export const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export function result(structured: Record<string, unknown>, text?: string): CallToolResult {
  const content = plain(structured);
  return { content: [{ type: "text", text: text ?? JSON.stringify(content, null, 2) }], structuredContent: content };
}

export function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Errors a caller can act on keep their message; anything else is logged and summarised. */
export function failureFor(err: unknown, tool: string, log: Logger): CallToolResult {
  if (err instanceof ApiError || err instanceof TranscriptError || err instanceof ConversationNotFound) return failure(err.message);
  if (err instanceof TurnNotFinished) return failure(`The reply failed: ${err.message}`);
  if (err instanceof EmbedderError) return failure(`Embedding failed, so memory cannot be searched or stored right now: ${err.message}`);
  log.error({ err, tool }, "MCP tool failed");
  return failure(`${tool} failed inside Psyche: ${(err as Error).message ?? String(err)}. The server log has the details.`);
}

/** Wraps a tool body so that any failure comes back as an `isError` result. */
export function guarded<A, E>(tool: string, log: Logger, body: (args: A, extra: E) => Promise<CallToolResult>): (args: A, extra: E) => Promise<CallToolResult> {
  return async (args, extra) => {
    try {
      return await body(args, extra);
    } catch (err) {
      return failureFor(err, tool, log);
    }
  };
}

// Server-sent events, as every stream of the API writes them.
import type { Context } from "hono";

/** One SSE event; `id` lets a client resume with Last-Event-ID. */
export function sseEvent(data: unknown, id?: number): string {
  return `${id === undefined ? "" : `id: ${id}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

/** One named event (`event:` and `data:` lines), as Anthropic's and the Responses API's streams frame theirs: the type in both. */
export const namedEvent = (type: string, payload: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

/** The headers of every event stream: not cached, not buffered by a proxy. */
export function sseHeaders(c: Context): void {
  c.header("Content-Type", "text/event-stream; charset=utf-8");
  c.header("Cache-Control", "no-cache");
  c.header("X-Accel-Buffering", "no");
}

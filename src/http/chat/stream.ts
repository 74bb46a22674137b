// A turn's events as the chat API's stream of chat.completion.chunk events (http/relay-turn.ts
// relays them): the role, the text as it comes, each tool call as the openai SDK accumulates
// it, the finish reason, the usage when asked, then [DONE]. Each event's id is the turn event's
// sequence number, so a client resumes with Last-Event-ID (GET /v1/turns/:id/events).
import type { Turn } from "../../db/sql/turns.js";
import type { StreamFrames } from "../relay-turn.js";
import { sseEvent } from "../sse.js";
import { replyReport } from "../tools.js";
import { chunk, type ChunkBase, openAiFinish, turnUsage, usageChunk } from "./render.js";

export interface ChatStreamOptions {
  base: ChunkBase;
  /** A usage chunk before [DONE] (stream_options.include_usage). */
  includeUsage: boolean;
  /** The opening `{role: "assistant"}` chunk (not when resuming mid-stream). */
  announceRole: boolean;
  /** The turn, for the message a relay that failed sends. */
  turnId: string;
}

export function chatStreamFrames(o: ChatStreamOptions): StreamFrames<Turn> {
  return {
    opening: () => (o.announceRole ? [sseEvent(chunk(o.base, { role: "assistant", content: "" }))] : []),
    text: (event) => [sseEvent(chunk(o.base, { content: event.content }), event.seq)],
    // llama-server's and DeepSeek's field for a thought as it streams; clients that know it show it as thinking.
    reasoning: (event) => [sseEvent(chunk(o.base, { reasoning_content: event.content }), event.seq)],
    end(turn, event) {
      const finish = openAiFinish(event.content as Turn["finish_reason"]);
      const calls = finish === "tool_calls" ? (turn.tool_calls ?? []) : [];
      const report = replyReport(turn);
      return [
        // Each call as the openai SDK accumulates it: id, type and name first, then the arguments.
        ...calls.flatMap((call, index) => [
          sseEvent(chunk(o.base, { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] })),
          sseEvent(chunk(o.base, { tool_calls: [{ index, function: { arguments: call.arguments } }] })),
        ]),
        sseEvent({ ...chunk(o.base, {}, finish), ...(Object.keys(report).length ? { psyche: report } : {}) }, event.seq),
        ...(o.includeUsage ? [sseEvent(usageChunk(o.base, turnUsage(turn)))] : []),
        sseEvent("[DONE]"),
      ];
    },
    failure: (event) => [streamError(event.content, "generation_failed", event.seq)],
    cutOff: () => [streamError(`relaying this reply failed; resume it with GET /v1/turns/${o.turnId}/events`, "relay_failed")],
  };
}

/** An OpenAI stream's error event: the turn failed, or its relay did. */
export const streamError = (message: string, code: "generation_failed" | "relay_failed", seq?: number) =>
  sseEvent({ error: { message, type: "server_error", param: null, code } }, seq);

// Relays a turn as Anthropic's event stream: message_start, a text block (content_block_start,
// text_delta..., content_block_stop), a tool_use block per call (input_json_delta), then
// message_delta with the stop reason and usage, and message_stop; each as event:/data: lines.
import type { Context } from "hono";
import { stream } from "hono/streaming";
import type { TurnFollower } from "../../conversation/follow-turn.js";
import { getTurn } from "../../db/sql/turns.js";
import type { WebServices } from "../../web-services.js";
import { sseHeaders } from "../sse.js";
import { anthropicUsage, messageId, stopReason, toolUseBlock } from "./render.js";

const frame = (type: string, payload: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

/** A client that disconnects only stops the relay: the turn goes on and is stored whole. */
export function streamMessage(c: Context, deps: WebServices, o: { follower: TurnFollower; model: string; inputTokens: number }): Response {
  sseHeaders(c);
  return stream(c, async (s) => {
    const relay = new AbortController();
    s.onAbort(() => relay.abort());
    const turnId = o.follower.turnId;
    let index = 0;
    let textOpen = false;
    const openText = async () => {
      textOpen = true;
      await s.write(frame("content_block_start", { index, content_block: { type: "text", text: "" } }));
    };
    try {
      await s.write(
        frame("message_start", {
          message: {
            id: messageId(turnId),
            type: "message",
            role: "assistant",
            model: o.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: o.inputTokens, output_tokens: 0 },
          },
        }),
      );
      await s.write(frame("ping", {}));
      for await (const event of o.follower.events({ afterSeq: 0, signal: relay.signal, fresh: true })) {
        if (event.kind === "delta") {
          if (!textOpen) await openText();
          await s.write(frame("content_block_delta", { index, delta: { type: "text_delta", text: event.content } }));
        } else if (event.kind === "done") {
          const turn = await getTurn(deps.pool, turnId);
          if (!turn) throw new Error(`turn ${turnId} vanished while streaming`);
          const calls = turn.finish_reason === "tool_calls" ? (turn.tool_calls ?? []) : [];
          // An empty reply without calls is still a text block, as the message object has it.
          if (!textOpen && calls.length === 0) await openText();
          if (textOpen) await s.write(frame("content_block_stop", { index: index++ }));
          for (const call of calls) {
            const block = toolUseBlock(call);
            await s.write(frame("content_block_start", { index, content_block: { ...block, input: {} } }));
            await s.write(
              frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }),
            );
            await s.write(frame("content_block_stop", { index: index++ }));
          }
          await s.write(
            frame("message_delta", {
              delta: { stop_reason: stopReason(turn.finish_reason), stop_sequence: null },
              // Cumulative, as Anthropic's are: the prompt as read, and the slot's cached part of it.
              usage: anthropicUsage(turn),
            }),
          );
          await s.write(frame("message_stop", {}));
        } else {
          await s.write(frame("error", { error: { type: "api_error", message: event.content } }));
        }
      }
    } catch (err) {
      deps.log.error({ err, turnId }, "relaying the message failed");
      const message = `relaying this message failed; the turn goes on: GET /v1/turns/${turnId} reads it, GET /v1/turns/${turnId}/events resumes it`;
      await s.write(frame("error", { error: { type: "api_error", message } }));
    }
  });
}

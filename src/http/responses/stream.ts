// Relays a response's turn as the Responses API's event stream. The events follow from the
// turn's stored events alone, so a replay from the start (GET /v1/responses/{id}?stream=true)
// numbers them the same, and `starting_after` resumes after any of them from any web process.
import type { Context } from "hono";
import { stream } from "hono/streaming";
import type { TurnFollower } from "../../conversation/follow-turn.js";
import { getResponse, type ResponseRow } from "../../db/sql/responses.js";
import type { WebServices } from "../../web-services.js";
import { messageItemId } from "../../conversation/response-ids.js";
import { functionCallItem, messageItem, outputText, responseObject } from "./render.js";
import { sseHeaders } from "../sse.js";

export interface StreamResponseOptions {
  follower: TurnFollower;
  /** The turn was just queued (no events to read before its first signal). */
  fresh: boolean;
  /** The response as it was created, for the opening events. */
  row: ResponseRow;
  /** Send only events with a higher sequence_number (-1: all). */
  startingAfter: number;
}

/** One Responses API event, as OpenAI frames it: the type as the SSE event name too. */
const frame = (type: string, payload: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;

/**
 * A client that disconnects only stops the relay: the response keeps generating and is stored
 * whole (GET /v1/responses/{id} reads it; POST /v1/responses/{id}/cancel stops it).
 */
export function streamResponse(c: Context, deps: WebServices, o: StreamResponseOptions): Response {
  sseHeaders(c);
  return stream(c, async (s) => {
    const relay = new AbortController();
    s.onAbort(() => relay.abort());
    let sequence = 0;
    const emit = async (type: string, payload: Record<string, unknown>) => {
      const n = sequence++;
      if (n > o.startingAfter) await s.write(frame(type, { sequence_number: n, ...payload }));
    };
    const turnId = o.follower.turnId;
    const itemId = messageItemId(turnId);
    const live = responseObject(o.row, true);
    let text = "";
    let opened = false;
    const openMessage = async () => {
      opened = true;
      await emit("response.output_item.added", { output_index: 0, item: messageItem(turnId, "", "in_progress") });
      await emit("response.content_part.added", { item_id: itemId, output_index: 0, content_index: 0, part: outputText("") });
    };
    try {
      await emit("response.created", { response: live });
      await emit("response.in_progress", { response: live });
      for await (const event of o.follower.events({ afterSeq: 0, signal: relay.signal, fresh: o.fresh })) {
        if (event.kind === "delta") {
          if (!opened) await openMessage();
          text += event.content;
          await emit("response.output_text.delta", {
            item_id: itemId,
            output_index: 0,
            content_index: 0,
            delta: event.content,
            logprobs: [],
          });
        } else if (event.kind === "done") {
          const row = await getResponse(deps.pool, turnId);
          if (!row) throw new Error(`response ${turnId} vanished while streaming`);
          const final = responseObject(row);
          const calls = row.finish_reason === "tool_calls" ? (row.tool_calls ?? []) : [];
          // An empty reply without calls is still a message item, as render.ts's output has it.
          if (!opened && calls.length === 0) await openMessage();
          if (opened) {
            await emit("response.output_text.done", { item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] });
            await emit("response.content_part.done", { item_id: itemId, output_index: 0, content_index: 0, part: outputText(text) });
            await emit("response.output_item.done", { output_index: 0, item: messageItem(turnId, text) });
          }
          for (const [i, call] of calls.entries()) {
            const outputIndex = i + (opened ? 1 : 0);
            const item = functionCallItem(call);
            await emit("response.output_item.added", { output_index: outputIndex, item: functionCallItem(call, "in_progress") });
            await emit("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta: call.arguments });
            await emit("response.function_call_arguments.done", {
              item_id: item.id,
              output_index: outputIndex,
              name: call.name,
              arguments: call.arguments,
            });
            await emit("response.output_item.done", { output_index: outputIndex, item });
          }
          await emit(final.status === "completed" ? "response.completed" : "response.incomplete", { response: final });
        } else {
          await emit("response.failed", {
            response: { ...live, status: "failed", error: { code: "server_error", message: event.content } },
          });
        }
      }
    } catch (err) {
      // As stream-turn.ts: a cut-off stream says so, and how to read the response once finished.
      deps.log.error({ err, turnId }, "relaying the response failed");
      const message = `relaying this response failed; read it with GET /v1/responses/${live.id}, or resume with ?stream=true&starting_after=${sequence - 1}`;
      await s.write(frame("error", { sequence_number: sequence++, code: "relay_failed", message, param: null }));
    }
  });
}

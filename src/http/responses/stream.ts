// A response's turn events as the Responses API's event stream (http/relay-turn.ts relays them).
// The events follow from the turn's stored events alone, so a replay from the start
// (GET /v1/responses/{id}?stream=true) numbers them the same, and `starting_after` resumes after
// any of them from any web process.
import type { ResponseRow } from "../../db/sql/responses.js";
import { messageItemId, reasoningItemId } from "../../conversation/response-ids.js";
import type { StreamFrames } from "../relay-turn.js";
import { namedEvent as frame } from "../sse.js";
import { functionCallItem, messageItem, outputText, reasoningItem, responseObject } from "./render.js";

export interface ResponseStreamOptions {
  /** The response as it was created, for the opening events. */
  row: ResponseRow;
  /** Send only events with a higher sequence_number (-1: all). */
  startingAfter: number;
}

export function responseStreamFrames(o: ResponseStreamOptions): StreamFrames<ResponseRow> {
  let sequence = 0;
  /** Numbers every event, and keeps those after `startingAfter`. */
  const emit = (frames: string[], type: string, payload: Record<string, unknown>) => {
    const n = sequence++;
    if (n > o.startingAfter) frames.push(frame(type, { sequence_number: n, ...payload }));
  };
  const turnId = o.row.id;
  const itemId = messageItemId(turnId);
  const live = responseObject(o.row, true);
  let text = "";
  let opened = false;
  /** The output items before the message's: the reasoning item, where the model thought first. */
  let before = 0;
  let thought = "";
  let thinking = false;
  const reasoningId = reasoningItemId(turnId);
  const closeReasoning = (frames: string[]) => {
    if (!thinking) return;
    thinking = false;
    emit(frames, "response.reasoning_text.done", { item_id: reasoningId, output_index: 0, content_index: 0, text: thought });
    emit(frames, "response.output_item.done", { output_index: 0, item: reasoningItem(turnId, thought) });
  };
  const openMessage = (frames: string[]) => {
    closeReasoning(frames);
    opened = true;
    emit(frames, "response.output_item.added", { output_index: before, item: messageItem(turnId, "", "in_progress") });
    emit(frames, "response.content_part.added", { item_id: itemId, output_index: before, content_index: 0, part: outputText("") });
  };
  return {
    opening() {
      const frames: string[] = [];
      emit(frames, "response.created", { response: live });
      emit(frames, "response.in_progress", { response: live });
      return frames;
    },
    // One reasoning item, before the message: a thought that comes after text (around a server tool) is kept with the turn, not streamed.
    reasoning(event) {
      const frames: string[] = [];
      if (opened) return frames;
      if (!thinking) {
        thinking = true;
        before = 1;
        emit(frames, "response.output_item.added", { output_index: 0, item: reasoningItem(turnId, "", "in_progress") });
      }
      thought += event.content;
      emit(frames, "response.reasoning_text.delta", { item_id: reasoningId, output_index: 0, content_index: 0, delta: event.content });
      return frames;
    },
    text(event) {
      const frames: string[] = [];
      if (!opened) openMessage(frames);
      text += event.content;
      emit(frames, "response.output_text.delta", {
        item_id: itemId,
        output_index: before,
        content_index: 0,
        delta: event.content,
        logprobs: [],
      });
      return frames;
    },
    end(row) {
      const frames: string[] = [];
      closeReasoning(frames);
      const final = responseObject(row);
      const calls = row.finish_reason === "tool_calls" ? (row.tool_calls ?? []) : [];
      // An empty reply without calls is still a message item, as render.ts's output has it.
      if (!opened && calls.length === 0) openMessage(frames);
      if (opened) {
        emit(frames, "response.output_text.done", { item_id: itemId, output_index: before, content_index: 0, text, logprobs: [] });
        emit(frames, "response.content_part.done", { item_id: itemId, output_index: before, content_index: 0, part: outputText(text) });
        emit(frames, "response.output_item.done", { output_index: before, item: messageItem(turnId, text) });
      }
      for (const [i, call] of calls.entries()) {
        const outputIndex = i + before + (opened ? 1 : 0);
        const item = functionCallItem(call);
        emit(frames, "response.output_item.added", { output_index: outputIndex, item: functionCallItem(call, "in_progress") });
        emit(frames, "response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta: call.arguments });
        emit(frames, "response.function_call_arguments.done", {
          item_id: item.id,
          output_index: outputIndex,
          name: call.name,
          arguments: call.arguments,
        });
        emit(frames, "response.output_item.done", { output_index: outputIndex, item });
      }
      emit(frames, final.status === "completed" ? "response.completed" : "response.incomplete", { response: final });
      return frames;
    },
    failure(event) {
      const frames: string[] = [];
      emit(frames, "response.failed", { response: { ...live, status: "failed", error: { code: "server_error", message: event.content } } });
      return frames;
    },
    // As the chat stream's: a cut-off stream says so, and how to read the response once finished.
    cutOff() {
      const last = sequence - 1;
      return [
        frame("error", {
          sequence_number: sequence++,
          code: "relay_failed",
          message: `relaying this response failed; read it with GET /v1/responses/${live.id}, or resume with ?stream=true&starting_after=${last}`,
          param: null,
        }),
      ];
    },
  };
}

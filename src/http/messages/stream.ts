// A turn's events as Anthropic's event stream (http/relay-turn.ts relays them): message_start, a
// thinking block where the model thought (thinking_delta..., its signature_delta), a text block
// (content_block_start, text_delta..., content_block_stop), a tool_use block per call
// (input_json_delta), then message_delta with the stop reason and usage, and message_stop.
import type { Turn } from "../../db/sql/turns.js";
import type { StreamFrames } from "../relay-turn.js";
import { namedEvent as frame } from "../sse.js";
import { anthropicUsage, messageId, stopReason, thinkingSignature, toolUseBlock } from "./render.js";

export function messageStreamFrames(o: { turnId: string; model: string; inputTokens: number }): StreamFrames<Turn> {
  let index = 0;
  let textOpen = false;
  let thinkingOpen = false;
  let textSeen = false;
  const openText = () => {
    textOpen = true;
    return frame("content_block_start", { index, content_block: { type: "text", text: "" } });
  };
  /** Ends an open thinking block, with its signature, as Anthropic's stream does. */
  const closeThinking = () => {
    if (!thinkingOpen) return [];
    thinkingOpen = false;
    return [
      frame("content_block_delta", { index, delta: { type: "signature_delta", signature: thinkingSignature(o.turnId) } }),
      frame("content_block_stop", { index: index++ }),
    ];
  };
  return {
    opening: () => [
      frame("message_start", {
        message: {
          id: messageId(o.turnId),
          type: "message",
          role: "assistant",
          model: o.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: o.inputTokens, output_tokens: 0 },
        },
      }),
      frame("ping", {}),
    ],
    reasoning(event) {
      const frames: string[] = [];
      // A thought after text (a later generation's, around a server tool): its own block after the text's.
      if (textOpen) {
        textOpen = false;
        textSeen = true;
        frames.push(frame("content_block_stop", { index: index++ }));
      }
      if (!thinkingOpen) {
        thinkingOpen = true;
        frames.push(frame("content_block_start", { index, content_block: { type: "thinking", thinking: "" } }));
      }
      frames.push(frame("content_block_delta", { index, delta: { type: "thinking_delta", thinking: event.content } }));
      return frames;
    },
    text: (event) => [
      ...closeThinking(),
      ...(textOpen ? [] : [openText()]),
      frame("content_block_delta", { index, delta: { type: "text_delta", text: event.content } }),
    ],
    end(turn) {
      const frames: string[] = [...closeThinking()];
      const calls = turn.finish_reason === "tool_calls" ? (turn.tool_calls ?? []) : [];
      // An empty reply without calls is still a text block, as the message object has it.
      if (!textOpen && !textSeen && calls.length === 0) frames.push(openText());
      if (textOpen) frames.push(frame("content_block_stop", { index: index++ }));
      for (const call of calls) {
        const block = toolUseBlock(call);
        frames.push(
          frame("content_block_start", { index, content_block: { ...block, input: {} } }),
          frame("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } }),
          frame("content_block_stop", { index: index++ }),
        );
      }
      frames.push(
        frame("message_delta", {
          delta: { stop_reason: stopReason(turn.finish_reason), stop_sequence: null },
          // Cumulative, as Anthropic's are: the prompt as read, and the slot's cached part of it.
          usage: anthropicUsage(turn),
        }),
        frame("message_stop", {}),
      );
      return frames;
    },
    failure: (event) => [frame("error", { error: { type: "api_error", message: event.content } })],
    cutOff: () => [
      frame("error", {
        error: {
          type: "api_error",
          message: `relaying this message failed; the turn goes on: GET /v1/turns/${o.turnId} reads it, GET /v1/turns/${o.turnId}/events resumes it`,
        },
      }),
    ],
  };
}

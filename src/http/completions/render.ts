// A text completion as OpenAI's text_completion objects: whole, or as its stream of chunks
// (http/relay-turn.ts relays them), then [DONE].
import type { Turn } from "../../db/sql/turns.js";
import type { StreamFrames } from "../relay-turn.js";
import { sseEvent } from "../sse.js";
import { openAiFinish, turnUsage } from "../chat/render.js";
import { streamError } from "../chat/stream.js";

export interface CompletionBase {
  id: string;
  created: number;
  model: string;
}

export const textCompletionId = (turnId: string) => `cmpl-${turnId}`;

const object = (base: CompletionBase, text: string, finish: string | null) => ({
  id: base.id,
  object: "text_completion",
  created: base.created,
  model: base.model,
  system_fingerprint: null,
  choices: [{ text, index: 0, logprobs: null, finish_reason: finish }],
});

/** A finished completion; with echo, the prompt before the text. */
export function textCompletion(turn: Turn, base: CompletionBase, echo: boolean) {
  const text = (echo ? (turn.prompt ?? "") : "") + (turn.content ?? "");
  return { ...object(base, text, openAiFinish(turn.finish_reason)), usage: turnUsage(turn), psyche: { turn_id: turn.id } };
}

export function textCompletionFrames(o: {
  base: CompletionBase;
  includeUsage: boolean;
  echo: string | null;
  turnId: string;
}): StreamFrames<Turn> {
  return {
    opening: () => (o.echo ? [sseEvent(object(o.base, o.echo, null))] : []),
    text: (event) => [sseEvent(object(o.base, event.content, null), event.seq)],
    // A text completion has no thought; a family that thinks writes it as text here.
    reasoning: () => [],
    end: (turn, event) => [
      sseEvent(object(o.base, "", openAiFinish(turn.finish_reason)), event.seq),
      ...(o.includeUsage ? [sseEvent({ ...object(o.base, "", null), choices: [], usage: turnUsage(turn) })] : []),
      sseEvent("[DONE]"),
    ],
    failure: (event) => [streamError(event.content, "generation_failed", event.seq)],
    cutOff: () => [streamError(`relaying this completion failed; read it with GET /v1/turns/${o.turnId}`, "relay_failed")],
  };
}

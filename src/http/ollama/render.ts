// A turn in Ollama's shapes: the closing object of /api/chat and /api/generate, whole or as the
// last line of their NDJSON streams (http/ollama/stream.ts). Durations are in nanoseconds, as
// Ollama gives them; the model stays loaded, so nothing is spent loading it.
import type { Turn } from "../../db/sql/turns.js";
import type { ToolCall } from "../../tools/types.js";

/** A finished turn with when its first text came (db/sql/turn-events.ts firstEventAt). */
export interface TimedTurn {
  turn: Turn;
  firstEventAt: Date | null;
}

export type OllamaShape = "chat" | "generate";

const NS_PER_MS = 1_000_000;
const ns = (from: Date | null | undefined, to: Date | null | undefined) =>
  from && to ? Math.max(1, Math.round((to.getTime() - from.getTime()) * NS_PER_MS)) : 1;

/** Ollama's done_reason: stop, length, or load (nothing generated). A cancelled turn ends as stop. */
const doneReason = (turn: Turn) => (turn.finish_reason === "length" ? "length" : "stop");

/** Each call as Ollama gives it: its arguments an object, with the id a client sends back in its tool message. */
export function ollamaToolCalls(calls: readonly ToolCall[]) {
  return calls.map((c, index) => {
    let args: unknown = {};
    try {
      args = JSON.parse(c.arguments);
    } catch {
      // A call whose arguments are not JSON is reported in `psyche` (http/tools.ts); Ollama's shape has an object here.
    }
    return { id: c.id, function: { index, name: c.name, arguments: args } };
  });
}

/** The timings and counts every closing object carries. */
export function ollamaStats({ turn, firstEventAt }: TimedTurn) {
  const start = turn.started_at ?? turn.created_at;
  const firstText = firstEventAt ?? turn.finished_at;
  return {
    total_duration: ns(turn.created_at, turn.finished_at),
    load_duration: 0,
    prompt_eval_count: turn.prompt_tokens ?? 0,
    prompt_eval_duration: ns(start, firstText),
    eval_count: turn.completion_tokens ?? 0,
    eval_duration: ns(firstText, turn.finished_at),
  };
}

export const createdAt = () => new Date().toISOString();

/** One streamed piece of text or thought, in the shape of the route. */
export function ollamaPiece(shape: OllamaShape, model: string, part: { content?: string; thinking?: string }) {
  if (shape === "chat")
    return {
      model,
      created_at: createdAt(),
      message: { role: "assistant", content: part.content ?? "", ...(part.thinking ? { thinking: part.thinking } : {}) },
      done: false,
    };
  return {
    model,
    created_at: createdAt(),
    response: part.content ?? "",
    ...(part.thinking ? { thinking: part.thinking } : {}),
    done: false,
  };
}

/**
 * The closing object. Whole (not streamed), it carries the reply; streamed, the text came
 * before it and only the calls come here, as Ollama sends them. `psyche` says where the turn is
 * stored, as on the other APIs.
 */
export function ollamaClosing(shape: OllamaShape, model: string, timed: TimedTurn, whole: boolean) {
  const { turn } = timed;
  const calls = turn.tool_calls?.length ? { tool_calls: ollamaToolCalls(turn.tool_calls) } : {};
  const thinking = whole && turn.reasoning ? { thinking: turn.reasoning } : {};
  const reply =
    shape === "chat"
      ? { message: { role: "assistant", content: whole ? (turn.content ?? "") : "", ...thinking, ...calls } }
      : { response: whole ? (turn.content ?? "") : "", ...thinking };
  return {
    model,
    created_at: createdAt(),
    ...reply,
    done: true,
    done_reason: doneReason(turn),
    ...ollamaStats(timed),
    psyche: { conversation_id: turn.conversation_id, turn_id: turn.id },
  };
}

/** The answer to a request with nothing to generate (no messages, an empty prompt): Ollama loads the model and says so. */
export function ollamaLoaded(shape: OllamaShape, model: string) {
  const reply = shape === "chat" ? { message: { role: "assistant", content: "" } } : { response: "" };
  return { model, created_at: createdAt(), ...reply, done: true, done_reason: "load" };
}

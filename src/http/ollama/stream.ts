// A turn's events as Ollama's NDJSON stream (http/relay-turn.ts relays them): one JSON object
// a line, a piece of text or thought each, then the closing object with `done: true` and the
// timings. An error is a line of `{"error": ...}`, which the `ollama` library throws.
import type { Context } from "hono";
import type { StreamFrames } from "../relay-turn.js";
import { ollamaClosing, ollamaPiece, type OllamaShape, type TimedTurn } from "./render.js";

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

export function ndjsonHeaders(c: Context): void {
  c.header("Content-Type", "application/x-ndjson");
  c.header("Cache-Control", "no-cache");
  c.header("X-Accel-Buffering", "no");
}

export function ollamaStreamFrames(shape: OllamaShape, model: string, turnId: string): StreamFrames<TimedTurn> {
  return {
    opening: () => [],
    text: (event) => [line(ollamaPiece(shape, model, { content: event.content }))],
    reasoning: (event) => [line(ollamaPiece(shape, model, { thinking: event.content }))],
    end: (timed) => [line(ollamaClosing(shape, model, timed, false))],
    failure: (event) => [line({ error: event.content })],
    cutOff: () => [line({ error: `relaying this reply failed; read it with GET /v1/turns/${turnId}` })],
  };
}

// Relays a turn's events as an OpenAI SSE stream. Used for a new streaming request and for
// resuming one (from any web process) by turn id and the last event id seen.
import type { Context } from "hono";
import { stream } from "hono/streaming";
import type { TurnFollower } from "../conversation/follow-turn.js";
import { getTurn } from "../db/sql/turns.js";
import type { WebServices } from "../web-services.js";
import { chunk, type ChunkBase, openAiFinish, sseEvent, sseHeaders, usageChunk, usageOf } from "./sse.js";
import { replyReport } from "./tools.js";

export interface StreamTurnOptions {
  follower: TurnFollower;
  /** The turn was just queued (no events to read before its first signal). */
  fresh: boolean;
  base: ChunkBase;
  afterSeq: number;
  includeUsage: boolean;
  /** Send the opening `{role: "assistant"}` chunk (not when resuming mid-stream). */
  announceRole: boolean;
}

/**
 * A client that disconnects only stops the relay: the turn keeps generating and is stored
 * whole, and the client may resume it or cancel it (POST /v1/turns/:id/cancel).
 */
export function streamTurn(c: Context, deps: WebServices, o: StreamTurnOptions): Response {
  sseHeaders(c);
  return stream(c, async (s) => {
    const relay = new AbortController();
    s.onAbort(() => relay.abort());
    if (o.announceRole) await s.write(sseEvent(chunk(o.base, { role: "assistant", content: "" })));
    try {
      for await (const event of o.follower.events({ afterSeq: o.afterSeq, signal: relay.signal, fresh: o.fresh })) {
        if (event.kind === "delta") {
          await s.write(sseEvent(chunk(o.base, { content: event.content }), event.seq));
        } else if (event.kind === "done") {
          const finish = openAiFinish(event.content as "stop" | "length" | "cancelled" | "tool_calls");
          const turn = await getTurn(deps.pool, o.follower.turnId);
          // Each call as the openai SDK accumulates it: id, type and name first, then the arguments.
          for (const [index, call] of (finish === "tool_calls" ? (turn?.tool_calls ?? []) : []).entries()) {
            await s.write(
              sseEvent(
                chunk(o.base, { tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }),
              ),
            );
            await s.write(sseEvent(chunk(o.base, { tool_calls: [{ index, function: { arguments: call.arguments } }] })));
          }
          const report = replyReport(turn);
          await s.write(sseEvent({ ...chunk(o.base, {}, finish), ...(Object.keys(report).length ? { psyche: report } : {}) }, event.seq));
          if (o.includeUsage) {
            await s.write(
              sseEvent(usageChunk(o.base, usageOf(turn?.prompt_tokens ?? 0, turn?.completion_tokens ?? 0, turn?.cached_tokens))),
            );
          }
          await s.write(sseEvent("[DONE]"));
        } else {
          await s.write(
            sseEvent({ error: { message: event.content, type: "server_error", param: null, code: "generation_failed" } }, event.seq),
          );
        }
      }
    } catch (err) {
      // Without this, hono's stream helper would end the stream silently and the client could
      // not tell a cut-off reply from a finished one. The turn itself goes on in the worker.
      deps.log.error({ err, turnId: o.follower.turnId }, "relaying the turn failed");
      const message = `relaying this reply failed; resume it with GET /v1/turns/${o.follower.turnId}/events`;
      await s.write(sseEvent({ error: { message, type: "server_error", param: null, code: "relay_failed" } }));
    }
  });
}

// One relay for every API's stream: it follows a turn's events from the database and writes the
// frames each API's translation makes of them (http/chat/stream.ts, messages/stream.ts,
// responses/stream.ts). The translations are pure; this is the only part that waits, reads and
// writes. A client that disconnects only stops the relay: the turn goes on and is stored whole.
import type { Context } from "hono";
import { stream } from "hono/streaming";
import type { TurnFollower } from "../conversation/follow-turn.js";
import type { TurnEvent } from "../db/sql/turn-events.js";
import type { Logger } from "../log.js";
import { sseHeaders } from "./sse.js";

/** An API's stream, as frames (whole SSE events) made from a turn's events. */
export interface StreamFrames<Row> {
  /** Before the turn's first event. */
  opening(): string[];
  /** A piece of the reply's text. */
  text(event: TurnEvent): string[];
  /** A piece of the model's thought (a reasoning family's), relayed as it comes. */
  reasoning(event: TurnEvent): string[];
  /** The turn's end, with its row read back (its calls, its usage). */
  end(row: Row, event: TurnEvent): string[];
  /** The turn failed: its error, in the API's shape. */
  failure(event: TurnEvent): string[];
  /** The relay itself failed: a last frame that says how to read or resume the turn. */
  cutOff(): string[];
}

export interface RelayOptions<Row> {
  follower: TurnFollower;
  /** The turn was just queued (no events to read before its first signal). */
  fresh: boolean;
  /** Relay the events after this one. */
  afterSeq: number;
  /** The turn's row as the end's frames need it. */
  read(turnId: string): Promise<Row | undefined>;
  frames: StreamFrames<Row>;
  /** The stream's headers: server-sent events unless the API streams otherwise (Ollama's NDJSON). */
  headers?: ((c: Context) => void) | undefined;
}

export function relayTurn<Row>(c: Context, deps: { log: Logger }, o: RelayOptions<Row>): Response {
  (o.headers ?? sseHeaders)(c);
  return stream(c, async (s) => {
    const relay = new AbortController();
    s.onAbort(() => relay.abort());
    const write = async (frames: string[]) => {
      for (const frame of frames) await s.write(frame);
    };
    const turnId = o.follower.turnId;
    try {
      await write(o.frames.opening());
      for await (const event of o.follower.events({ afterSeq: o.afterSeq, signal: relay.signal, fresh: o.fresh })) {
        switch (event.kind) {
          case "delta":
            await write(o.frames.text(event));
            break;
          case "reasoning":
            await write(o.frames.reasoning(event));
            break;
          case "done": {
            const row = await o.read(turnId);
            if (!row) throw new Error(`turn ${turnId} vanished while streaming`);
            await write(o.frames.end(row, event));
            break;
          }
          case "error":
            await write(o.frames.failure(event));
            break;
          default:
            event.kind satisfies never;
        }
      }
    } catch (err) {
      // Without this, hono's stream helper would end the stream silently and the client could
      // not tell a cut-off reply from a finished one. The turn itself goes on in the worker.
      deps.log.error({ err, turnId }, "relaying the turn failed");
      await write(o.frames.cutOff());
    }
  });
}

// MCP's older HTTP+SSE transport (protocol 2024-11-05), for clients that still speak it (seed
// 004's client configuration, older desktop apps): GET /sse opens an event stream whose first
// event names the endpoint to POST to (/messages?sessionId=...), and every reply comes back on
// that stream. Unlike /mcp (http-route.ts) this keeps a session in the web process that opened
// the stream: a client posts to the same server it listens to. The MCP server behind each
// session is the same as /mcp's (server.ts).
import { randomUUID } from "node:crypto";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { stream } from "hono/streaming";

/** A comment line this often keeps proxies and clients from closing a quiet stream. */
const KEEP_ALIVE_MS = 25_000;

/** One session's side of the transport: messages the client POSTs in, replies out on its stream. */
export class LegacySseTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private closed = false;

  constructor(private readonly write: (frame: string) => Promise<void>) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error("the client's event stream is closed");
    await this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** A message the client POSTed: refused when it is not JSON-RPC (the caller answers 400). */
  receive(body: unknown): void {
    const message = JSONRPCMessageSchema.parse(body);
    this.onmessage?.(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}

export interface LegacySessions {
  /** GET /sse: the stream, held open until the client goes; `connect` joins an MCP server to the session. */
  open(c: Context, connect: (transport: LegacySseTransport) => Promise<{ close(): Promise<void> }>): Response;
  /** The session a POST /messages names. */
  get(sessionId: string): LegacySseTransport | undefined;
}

export function legacySessions(): LegacySessions {
  const sessions = new Map<string, { transport: LegacySseTransport }>();
  return {
    open(c, connect) {
      // As the API's streams (http/sse.ts, which mcp/ does not import): not cached, not buffered by a proxy.
      c.header("Content-Type", "text/event-stream; charset=utf-8");
      c.header("Cache-Control", "no-cache");
      c.header("X-Accel-Buffering", "no");
      return stream(c, async (s) => {
        const transport = new LegacySseTransport((frame) => s.write(frame).then(() => undefined));
        sessions.set(transport.sessionId, { transport });
        const ended = new Promise<void>((resolve) => s.onAbort(resolve));
        const server = await connect(transport);
        const keepAlive = setInterval(() => void s.write(": keep-alive\n\n").catch(() => undefined), KEEP_ALIVE_MS);
        try {
          // Relative to where the stream was opened, as the SDK's own server says it.
          await s.write(
            `event: endpoint\ndata: ${new URL(c.req.url).pathname.replace(/\/sse$/, "")}/messages?sessionId=${transport.sessionId}\n\n`,
          );
          await ended;
        } finally {
          clearInterval(keepAlive);
          sessions.delete(transport.sessionId);
          await transport.close();
          await server.close();
        }
      });
    },
    get: (sessionId) => sessions.get(sessionId)?.transport,
  };
}

// `psyche mcp`: for MCP clients that spawn a process (Claude Desktop, Claude Code's stdio
// servers). It loads nothing: it relays JSON-RPC between stdin/stdout and a running server's
// /mcp, so every client shares one server with its models loaded once.
import type { Readable, Writable } from "node:stream";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { UserError } from "../errors.js";
import { EventFollower } from "./event-follower.js";

/** The resource a stdio client may subscribe to (mcp/resources.ts serves it). */
const EVENTS_URI = "psyche://events";

/** The bridge cannot start: no server, or one that refuses it. */
export class BridgeError extends UserError {
  override name = "BridgeError";
}

/** The server's base URL: --server-url, else the address `psyche serve` would listen on. */
export function serverBaseUrl(config: Pick<Config, "serverUrl" | "host" | "port">): string {
  if (config.serverUrl) return config.serverUrl.replace(/\/+$/, "");
  const host =
    config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host.includes(":") ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

/**
 * Pings /mcp. Throws a BridgeError that says what to do when nothing answers (start a server)
 * or the server refuses the API key, so a client's log shows the reason rather than a dead pipe.
 */
export async function checkServer(base: string, apiKey: string | undefined, timeoutMs = 3000): Promise<void> {
  let ping: Response;
  try {
    ping = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping" }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    const problem =
      cause === "ECONNREFUSED"
        ? "nothing is listening there"
        : (err as Error).name === "TimeoutError"
          ? "it did not answer in time"
          : (err as Error).message;
    throw new BridgeError(
      `no Psyche server at ${base} (${problem}). Start one first: \`psyche serve\` (or \`npm start\` in the Psyche folder), ` +
        "and keep it running; set PSYCHE_SERVER_URL (or --server-url) if it listens elsewhere.",
    );
  }
  if (ping.status === 401) {
    throw new BridgeError(
      `the Psyche server at ${base} refused ${apiKey ? "the API key" : "a request without an API key"}: set PSYCHE_API_KEY (or --api-key) to the server's key`,
    );
  }
  if (!ping.ok)
    throw new BridgeError(`the Psyche server at ${base} answered /mcp with HTTP ${ping.status}: ${(await ping.text()).slice(0, 200)}`);
}

export interface Bridge {
  /** Resolves when stdin ends or either side closes. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function startStdioBridge(
  config: Pick<Config, "serverUrl" | "host" | "port" | "apiKey">,
  log: Logger,
  io: { stdin: Readable; stdout: Writable } = { stdin: process.stdin, stdout: process.stdout },
): Promise<Bridge> {
  const base = serverBaseUrl(config);
  await checkServer(base, config.apiKey);
  const stdio = new StdioServerTransport(io.stdin, io.stdout);
  const http = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: config.apiKey ? { headers: { authorization: `Bearer ${config.apiKey}` } } : {},
  });
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  // Closing a transport calls its onclose, which calls this again, at once: the flag is set
  // before anything is closed.
  let closing = false;
  // Subscriptions to psyche://events are the bridge's own: it follows GET /v1/events and tells
  // the client when the resource changed. The server's answer to initialize gains the
  // capability (the stateless HTTP endpoint does not offer it: it cannot push).
  let follower: EventFollower | undefined;
  let initializeId: RequestId | undefined;
  const subscription = async (request: { id: RequestId; method: string }) => {
    if (request.method === "resources/subscribe") {
      follower ??= new EventFollower(base, config.apiKey, log, () => {
        void stdio.send({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: EVENTS_URI } }).catch(() => undefined);
      });
    } else {
      follower?.close();
      follower = undefined;
    }
    await stdio.send({ jsonrpc: "2.0", id: request.id, result: {} }).catch(() => undefined);
  };
  const close = async (): Promise<void> => {
    if (closing) return closed;
    closing = true;
    follower?.close();
    await Promise.allSettled([stdio.close(), http.close()]);
    resolveClosed();
  };

  // Requests sent on and not yet answered: when stdin ends (a client that wrote its requests
  // and closed the pipe), their answers are still written before the bridge closes.
  const pending = new Set<RequestId>();
  let stdinEnded = false;
  const answered = (id: RequestId) => {
    pending.delete(id);
    if (stdinEnded && pending.size === 0) void close();
  };

  stdio.onmessage = (message: JSONRPCMessage) => {
    const request = isJSONRPCRequest(message) ? message : undefined;
    if (
      request &&
      (request.method === "resources/subscribe" || request.method === "resources/unsubscribe") &&
      request.params?.uri === EVENTS_URI
    ) {
      void subscription(request);
      return;
    }
    if (request?.method === "initialize") initializeId = request.id;
    if (request) pending.add(request.id);
    http.send(message).catch(async (err: unknown) => {
      log.warn({ err }, "the server did not take a message");
      // A request must be answered, or the client waits for ever.
      if (!request) return;
      await stdio
        .send({
          jsonrpc: "2.0",
          id: request.id,
          error: { code: -32000, message: `Psyche at ${base} did not answer: ${(err as Error).message}` },
        })
        .catch(() => undefined);
      answered(request.id);
    });
  };
  http.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCResultResponse(message) && initializeId !== undefined && message.id === initializeId) {
      const capabilities = (message.result as { capabilities?: { resources?: Record<string, unknown> } }).capabilities;
      if (capabilities) capabilities.resources = { ...capabilities.resources, subscribe: true };
    }
    void stdio
      .send(message)
      .catch((err: unknown) => log.warn({ err }, "could not write to stdout"))
      .then(() => {
        if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
          if (message.id !== undefined) answered(message.id);
        }
      });
  };
  stdio.onerror = (err) => log.warn({ err }, "stdin carried something that is not JSON-RPC");
  http.onerror = (err) => log.debug({ err }, "MCP HTTP transport");
  stdio.onclose = () => void close();
  io.stdin.once("end", () => {
    stdinEnded = true;
    if (pending.size === 0) void close();
  });

  await http.start();
  await stdio.start();
  log.info({ url: `${base}/mcp` }, "bridging stdio to Psyche's MCP endpoint");
  return { closed, close };
}

// Hermes's side of the wire: the OpenAI-compatible chat endpoint through the `openai` SDK, and
// Psyche's own routes (presence, mood, dreams, memories, turns) with fetch. Hermes is a client
// of the public API only; against a plain OpenAI-compatible server the extras are simply absent.
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from "openai";
import type { ChatCompletionMessageParam, ChatCompletionToolChoiceOption, ChatCompletionTool } from "openai/resources/chat/completions";

export class HermesError extends Error {
  override name = "HermesError";
}

/** The server said the reply failed (an `error` event in its stream): its answer, not a dropped stream. */
export class ReplyFailed extends HermesError {
  override name = "ReplyFailed";
}

/** The openai SDK throws an APIError without a status for an `error` event in a stream. */
function reportedInStream(err: unknown): err is APIError {
  return err instanceof APIError && !(err instanceof APIConnectionError) && err.status === undefined;
}

function replyFailed(message: string | undefined): ReplyFailed {
  return new ReplyFailed(`the server failed this reply: ${message ?? "unknown error"}`);
}

/** A readable line for anything the server or the network threw. */
export function explain(err: unknown, server: string): string {
  if (err instanceof HermesError) return err.message;
  if (err instanceof APIUserAbortError) return "cancelled";
  if (err instanceof APIConnectionError || isConnectionRefused(err))
    return `cannot reach a server at ${server} (is Psyche running? \`psyche start\` starts it)`;
  if (err instanceof APIError) {
    if (err.status === 401 || err.status === 403)
      return `the server at ${server} refused the API key (${err.status}): pass --api-key or set PSYCHE_API_KEY`;
    return `the server answered ${err.status}: ${(err.error as { message?: string } | undefined)?.message ?? err.message}`;
  }
  return (err as Error).message ?? String(err);
}

function isConnectionRefused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } })?.cause;
  return err instanceof TypeError && typeof cause?.code === "string" && /ECONNREFUSED|ENOTFOUND|ECONNRESET|EHOSTUNREACH/.test(cause.code);
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Reply {
  content: string;
  toolCalls: ToolCall[];
  finishReason: string;
  turnId: string | null;
}

export interface SendOptions {
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
  toolChoice?: ChatCompletionToolChoiceOption | undefined;
  maxTokens?: number | undefined;
  seed?: number | undefined;
  conversationId: string;
  /** Marks an unattended exploration (X-Psyche-Purpose), so Psyche keeps what it found, not its prompt. */
  exploration?: boolean;
  signal?: AbortSignal | undefined;
  onText?: (text: string) => void;
  /** The turn's id as soon as the server names it (to cancel it). */
  onTurn?: (turnId: string) => void;
  /** The stream dropped and Hermes is waiting for the server; called with false once it is back. */
  onReconnecting?: (reconnecting: boolean) => void;
}

export class PsycheServer {
  readonly openai: OpenAI;
  /** Psyche's own routes answer (set by connect()): conversations live on the server. */
  isPsyche = false;
  model = "psyche";

  constructor(
    readonly url: string,
    private readonly apiKey: string | undefined,
    private readonly reconnectMs = 60_000,
  ) {
    this.openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: apiKey ?? "none", maxRetries: 0, timeout: 10 * 60_000 });
  }

  /** Checks the server and the key; learns whether it is Psyche. Throws HermesError with a readable reason. */
  async connect(): Promise<void> {
    try {
      const models = await this.openai.models.list();
      this.model = models.data[0]?.id ?? this.model;
    } catch (err) {
      throw new HermesError(explain(err, this.url));
    }
    const health = await this.get("/health").catch(() => undefined);
    this.isPsyche = typeof (health as { version?: unknown } | undefined)?.version === "string";
  }

  /** One generation, streamed; a dropped stream resumes from the turn's stored events. */
  async send(o: SendOptions): Promise<Reply> {
    const { data: stream, response } = await this.openai.chat.completions
      .create(
        {
          model: this.model,
          messages: o.messages,
          stream: true,
          ...(o.tools.length ? { tools: o.tools, tool_choice: o.toolChoice ?? "auto" } : {}),
          ...(o.maxTokens ? { max_tokens: o.maxTokens } : {}),
          ...(o.seed !== undefined ? { seed: o.seed } : {}),
        },
        {
          signal: o.signal,
          headers: this.isPsyche
            ? { "X-Psyche-Conversation": o.conversationId, ...(o.exploration ? { "X-Psyche-Purpose": "exploration" } : {}) }
            : {},
        },
      )
      .withResponse();
    const turnId = response.headers.get("x-psyche-turn");
    if (turnId) o.onTurn?.(turnId);
    const reply: Reply = { content: "", toolCalls: [], finishReason: "stop", turnId };
    try {
      for await (const chunk of stream) absorb(reply, chunk, o.onText);
      return reply;
    } catch (err) {
      if (reportedInStream(err)) throw replyFailed((err.error as { message?: string } | undefined)?.message ?? err.message);
      if (o.signal?.aborted || !turnId || !this.isPsyche || err instanceof ReplyFailed) throw err;
      return this.resume(turnId, reply, o);
    }
  }

  /** Replays the turn's stream from its start (GET /v1/turns/:id/events), showing only what was not shown. */
  private async resume(turnId: string, partial: Reply, o: SendOptions): Promise<Reply> {
    const shown = partial.content.length;
    const deadline = Date.now() + this.reconnectMs;
    o.onReconnecting?.(true);
    for (;;) {
      try {
        const res = await fetch(`${this.url}/v1/turns/${turnId}/events?after=0`, { headers: this.headers(), signal: o.signal ?? null });
        if (!res.ok || !res.body) throw new HermesError(`resuming the reply failed: ${res.status}`);
        o.onReconnecting?.(false);
        const reply: Reply = { content: "", toolCalls: [], finishReason: "stop", turnId };
        const onText = (text: string) => {
          const before = reply.content.length - text.length;
          const fresh = text.slice(Math.max(0, shown - before));
          if (fresh) o.onText?.(fresh);
        };
        for await (const data of sseData(res.body)) absorb(reply, JSON.parse(data), onText);
        return reply;
      } catch (err) {
        if (o.signal?.aborted || err instanceof ReplyFailed) throw err;
        if (Date.now() > deadline) throw new HermesError(`the server at ${this.url} did not come back within ${this.reconnectMs / 1000} s`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  headers(): Record<string, string> {
    return { "content-type": "application/json", ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}) };
  }

  /** GET a Psyche route as JSON; throws HermesError with the server's message. */
  async get(path: string): Promise<unknown> {
    return this.request("GET", path);
  }

  async request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<unknown> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: this.headers(),
      body: body === undefined ? null : JSON.stringify(body),
      signal: signal ?? AbortSignal.timeout(10_000),
    });
    const json = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
    if (!res.ok) throw new HermesError(`${method} ${path}: ${res.status} ${json.error?.message ?? res.statusText}`);
    return json;
  }

  cancel(turnId: string): Promise<unknown> {
    return this.request("POST", `/v1/turns/${turnId}/cancel`);
  }
}

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk & { error?: { message?: string } };

function absorb(reply: Reply, chunk: Chunk, onText?: (text: string) => void): void {
  if (chunk.error) throw replyFailed(chunk.error.message);
  const choice = chunk.choices?.[0];
  if (!choice) return;
  const text = choice.delta?.content;
  if (text) {
    reply.content += text;
    onText?.(text);
  }
  for (const call of choice.delta?.tool_calls ?? []) {
    const slot = (reply.toolCalls[call.index] ??= { id: "", name: "", arguments: "" });
    if (call.id) slot.id = call.id;
    if (call.function?.name) slot.name = call.function.name;
    if (call.function?.arguments) slot.arguments += call.function.arguments;
  }
  if (choice.finish_reason) reply.finishReason = choice.finish_reason;
}

/** The `data:` payloads of an SSE body, up to `[DONE]`. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      if (data === "[DONE]") return;
      if (data) yield data;
    }
  }
  throw new HermesError("the resumed stream ended before [DONE]");
}

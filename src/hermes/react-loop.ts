// The ReAct loop (reason, act, observe): send, run the returned tool calls here (in order), send their
// results as tool messages, repeat until a reply has no tool calls or the iterations run out.
// Psyche's own memory tools run on the server and never reach this loop.
import type { ChatCompletionMessageParam, ChatCompletionTool, ChatCompletionToolChoiceOption } from "openai/resources/chat/completions";
import type { PsycheServer, Reply, ToolCall } from "./server.js";
import type { LocalTools, ToolResult } from "./tools.js";

export interface ToolActivity {
  call: ToolCall;
  state: "running" | "ok" | "failed";
  ms?: number;
  output?: string;
}

export interface LoopOptions {
  server: PsycheServer;
  tools: LocalTools;
  definitions: ChatCompletionTool[];
  /** Tool names this loop may run (idle exploration: the read-only ones). */
  allowed: readonly string[];
  conversationId: string;
  /** An unattended exploration: said to the server, and private files are skipped. */
  exploration?: boolean;
  maxIterations: number;
  /** For the first request only; later ones are "auto". */
  firstToolChoice?: ChatCompletionToolChoiceOption | undefined;
  maxTokens?: number | undefined;
  seed?: number | undefined;
  /** Waited between tool calls (idle exploration's cooldown). */
  cooldownMs?: number;
  signal?: AbortSignal | undefined;
  onText?: (text: string) => void;
  onTurn?: (turnId: string) => void;
  onTool?: (activity: ToolActivity) => void;
  onReconnecting?: (reconnecting: boolean) => void;
}

export interface LoopResult {
  reply: Reply;
  iterations: number;
  /** Every tool run, in order. */
  ran: { call: ToolCall; result: ToolResult }[];
  /** Even the last request (tool_choice "none") came back with tool calls. */
  exhausted: boolean;
}

/**
 * This session's transcript, extended in place. Psyche keeps the conversation, so only what it
 * has not seen goes out (`unsent`: the new message, and tool results a cancel left behind);
 * any other server gets the whole transcript each time.
 */
export interface Transcript {
  history: ChatCompletionMessageParam[];
  unsent: ChatCompletionMessageParam[];
}

export async function react(t: Transcript, first: ChatCompletionMessageParam, o: LoopOptions): Promise<LoopResult> {
  t.history.push(first);
  t.unsent.push(first);
  const ran: LoopResult["ran"] = [];
  for (let iteration = 1; ; iteration++) {
    // Past the last iteration, the model gets the results and must answer in words.
    const last = iteration > o.maxIterations;
    // Once the server has named the turn it has the messages: a cancel after that must not
    // send them again with the next one.
    let reached = false;
    const reply = await o.server
      .send({
        messages: o.server.isPsyche ? t.unsent : t.history,
        tools: o.definitions,
        toolChoice: last ? "none" : iteration === 1 ? o.firstToolChoice : "auto",
        maxTokens: o.maxTokens,
        seed: o.seed,
        conversationId: o.conversationId,
        ...(o.exploration ? { exploration: true } : {}),
        signal: o.signal,
        ...(o.onText ? { onText: o.onText } : {}),
        onTurn: (id) => {
          reached = true;
          o.onTurn?.(id);
        },
        ...(o.onReconnecting ? { onReconnecting: o.onReconnecting } : {}),
      })
      .catch((err: unknown) => {
        if (reached) t.unsent = [];
        throw err;
      });
    t.unsent = [];
    const calls = reply.finishReason === "tool_calls" ? reply.toolCalls : [];
    t.history.push({
      role: "assistant",
      content: reply.content || null,
      ...(calls.length
        ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })) }
        : {}),
    });
    if (!calls.length || o.signal?.aborted || last) return { reply, iterations: iteration, ran, exhausted: last && calls.length > 0 };
    for (const [i, call] of calls.entries()) {
      if (i > 0 && o.cooldownMs) await sleep(o.cooldownMs, o.signal);
      let result: ToolResult;
      // Stopped: the calls not yet run are answered, unrun, so the conversation stays whole.
      if (o.signal?.aborted) result = { ok: false, output: "error: not run: the user stopped this" };
      else {
        o.onTool?.({ call, state: "running" });
        const started = performance.now();
        result = await o.tools.run(call.name, call.arguments, o.allowed);
        o.onTool?.({ call, state: result.ok ? "ok" : "failed", ms: performance.now() - started, output: result.output });
        ran.push({ call, result });
      }
      const message: ChatCompletionMessageParam = { role: "tool", tool_call_id: call.id, content: result.output };
      t.history.push(message);
      t.unsent.push(message);
    }
    if (o.signal?.aborted) return { reply, iterations: iteration, ran, exhausted: false };
    if (o.cooldownMs) await sleep(o.cooldownMs, o.signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

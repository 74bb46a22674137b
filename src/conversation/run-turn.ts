// The worker side of a chat turn: claim it, build the prompt from the stored transcript,
// generate (continuing any text a dead worker already streamed), stream events, finish.
import { DEFAULT_SCOPE, readableScopes } from "../scope.js";
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import type { Logger } from "../log.js";
import { appendClosingEvent } from "../db/sql/turn-events.js";
import { type ClaimedTurn, claimTurn, failTurn, finishTurn } from "../db/sql/turns.js";
import { isConnectionError } from "../db/errors.js";
import type { Pool } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { encodeTurnSignal } from "../jobs/turn-signal.js";
import { INFERENCE_QUEUE, MEMORY_QUEUE, type RememberTurnJob, sendStatement } from "../jobs/queue.js";
import type { Recall } from "../memory/recall.js";
import type { ServerTools } from "../memory/memory-tools.js";
import type { GenerateRequest, GenerateResult, Generator, PromptMessage } from "../inference/engine.js";
import type { GeneratedToolCall } from "../tools/types.js";
import { formatInstruction } from "../tools/response-format.js";
import { offeredTools, offersServerTools } from "../tools/offered.js";
import { ContextOverflow } from "../errors.js";
import { EventBatch } from "./event-batch.js";
import { EventWriter } from "./event-writer.js";

export interface RunTurnDeps {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  /** The model, through the scheduler that owns its time (inference/scheduler.ts). */
  model: Generator;
  log: Logger;
  workerId: string;
  persona: string;
  /** Psyche's own tools (memory), run here between generations; never shown to the client. */
  serverTools?: ServerTools | undefined;
  /** Generations one turn may make around server tool calls. Default 5. */
  serverToolIterations?: number | undefined;
  /** Mood and memories for the prompt; without it, the prompt is persona and transcript. */
  recall?: Recall | undefined;
  /** Least time between two event writes of one stream while generating. Default DEFAULT_FLUSH_MS. */
  flushMs?: number | undefined;
  /**
   * Turns this worker is generating now. One stream's writes are spaced by flushMs times this
   * (up to MAX_FLUSH_MS), so the worker's writes per second stay about the same however many it
   * streams: each write is a statement the turns' own queries wait behind (docs/decisions.md,
   * "Spaced by the streams").
   */
  streams?: () => number;
  /** The worker's one writer of its turns' events, which writes those of the same moment together; without it, each turn writes alone. */
  events?: EventBatch | undefined;
  /**
   * Counts the turn as this process taking one in (inference/core-share.ts) from its start to
   * its first event written, the returned call ending it: that write and its relay are the
   * first token's last steps, on this thread and the database's, while the model's threads
   * would otherwise hold every core (docs/decisions.md, "A core left until a turn's first text
   * is written").
   */
  holdCore?: (() => () => void) | undefined;
}

/**
 * The least spacing of one stream's event writes (--stream-flush-ms): 10 a second. Each write,
 * with its relay to the client, is work on the main thread, beside the cores the model decodes
 * on (docs/decisions.md, "Stream writes 100 ms apart").
 */
export const DEFAULT_FLUSH_MS = 100;

/** The longest spacing of a stream's event writes, however many streams run. */
const MAX_FLUSH_MS = 200;

/** The spacing of one stream's event writes with `streams` streams running (see RunTurnDeps.streams). */
export function flushSpacing(baseMs: number, streams: number): number {
  return Math.max(baseMs, Math.min(MAX_FLUSH_MS, baseMs * streams));
}

/** Why a turn stopped without finishing here: the worker is shutting down and hands it on. */
export class HandOff extends Error {
  override name = "HandOff";
}

/**
 * "done" and "cancelled": the turn's job was completed with its end (db/sql/turns.ts,
 * finishTurn). "stranded": the database went away under the turn; the worker settles it once it
 * is back. "unstored": handed before its store, which failed: neither turn nor job exists. The
 * worker completes the job of any other outcome but "handed-off".
 */
export type RunTurnOutcome = "done" | "cancelled" | "failed" | "skipped" | "lost" | "handed-off" | "stranded" | "unstored";

interface TranscriptMessage {
  role: string;
  content: string;
  tool_calls?: readonly { id: string; name: string; arguments: string }[] | null;
  tool_call_id?: string | null;
  /** The context an earlier turn put before this user message (migrations/000031_message_context.sql). */
  context?: string | null;
}

/**
 * Persona, the turn's own instructions (the Responses API's), transcript, and `context` (mood,
 * memories) as a system message just before the latest user message. Each earlier user message
 * keeps the context it was answered with, in its place (`earlier`: unless they are left out to
 * fit): so the transcript before the latest context stays the prefix the model read last time,
 * and its cache of it is reused from turn to turn, also after an agent's loop of tool results (a
 * client that sends instructions sends the same ones each time).
 */
export function buildPrompt(
  persona: string,
  messages: readonly TranscriptMessage[],
  context = "",
  instructions: string | null = null,
  earlier = true,
): PromptMessage[] {
  const prompt: PromptMessage[] = [];
  if (persona) prompt.push({ role: "system", content: persona });
  if (instructions) prompt.push({ role: "system", content: instructions });
  const latest = messages.findLastIndex((m) => m.role === "user");
  messages.forEach((m, i) => {
    if (i === latest && context) prompt.push({ role: "system", content: context });
    else if (earlier && i < latest && m.role === "user" && m.context) prompt.push({ role: "system", content: m.context });
    if (m.role === "system" || m.role === "user") prompt.push({ role: m.role, content: m.content });
    else if (m.role === "assistant")
      prompt.push({ role: "assistant", content: m.content, ...(m.tool_calls?.length ? { toolCalls: m.tool_calls } : {}) });
    else if (m.role === "tool" && m.tool_call_id) prompt.push({ role: "tool", content: m.content, toolCallId: m.tool_call_id });
  });
  if (latest === -1 && context) prompt.push({ role: "system", content: context });
  return prompt;
}

/**
 * The mood-and-memories context for a turn, and whether it was recalled now: an agent loop's
 * later steps answer the same user message, and reuse the context its first step placed before
 * it. A failure costs the context, never the turn.
 */
async function contextFor(
  deps: RunTurnDeps,
  turn: ClaimedTurn,
  signal: AbortSignal,
  log: Logger,
): Promise<{ text: string; recalled?: { position: number; text: string } }> {
  if (turn.purpose === "completion") return { text: "" };
  const anchor = turn.prompt_messages.findLast((m) => m.role === "user");
  if (anchor?.context) return { text: anchor.context };
  if (!deps.recall) return { text: "" };
  try {
    const text = await deps.recall.contextFor(anchor?.content ?? "", {
      signal,
      scopes: readableScopes(turn.scope ?? DEFAULT_SCOPE),
      conversationId: turn.conversation_id ?? undefined,
    });
    return { text, ...(anchor && text ? { recalled: { position: anchor.position, text } } : {}) };
  } catch (err) {
    if (!signal.aborted) log.warn({ err }, "recalling memories failed; answering without them");
    return { text: "" };
  }
}

/**
 * Runs one chat turn: claims turn `turnId` for job `jobId` and generates it. `signal` is the
 * job's: aborting it with a HandOff reason stops generation and leaves the turn running for
 * reclaim (see jobs/reclaim.ts); any other abort reason cancels the turn. `claimed` is given
 * where the worker took the job and claimed the turn in one statement (db/sql/turns.ts,
 * takeQueuedTurn); its turn is undefined when the turn was no longer queued. A turn handed
 * while it is stored (jobs/hand-off.ts) comes with `stored`: the turn is generated meanwhile,
 * but nothing is written for it before that resolves, and nothing at all if it rejects.
 */
export async function runTurn(
  deps: RunTurnDeps,
  turnId: string,
  jobId: string,
  signal: AbortSignal,
  claimed?: { turn: ClaimedTurn | undefined; stored?: Promise<void> | undefined },
): Promise<RunTurnOutcome> {
  const turn = claimed ? claimed.turn : await claimTurn(deps.pool, turnId, jobId, deps.workerId);
  if (!turn) return "skipped";
  const log = deps.log.child({ turnId, attempt: turn.attempts });
  const stored = claimed?.stored?.then(
    () => true,
    () => false,
  );
  try {
    return await generateTurn(deps, turn, jobId, signal, log, stored);
  } catch (err) {
    // Its store failed (the request was answered with the error): nothing to write.
    if (stored && !(await stored)) return "unstored";
    // Its database went away (a restart): nothing can be written now, and the turn is not the
    // model's failure. The worker resumes it once the database is back (InferenceWorker).
    if (isConnectionError(err)) {
      log.warn({ err }, "the database went away during the turn; it is resumed once the database is back");
      return "stranded";
    }
    log.error({ err }, "turn failed");
    const message = `generation failed: ${(err as Error).message}`;
    try {
      if (await failTurn(deps.pool, turnId, message)) await appendClosingEvent(deps.pool, turnId, "error", message);
    } catch (writeErr) {
      if (!isConnectionError(writeErr)) throw writeErr;
      log.warn({ err: writeErr }, "the turn's failure could not be written; it is settled once the database is back");
      return "stranded";
    }
    deps.bus.notify(Channel.turn, encodeTurnSignal(turnId));
    return "failed";
  }
}

async function generateTurn(
  deps: RunTurnDeps,
  turn: ClaimedTurn,
  jobId: string,
  jobSignal: AbortSignal,
  log: Logger,
  /** Resolves true once the turn is stored, false where its store failed (runTurn); unset: stored already. */
  stored: Promise<boolean> | undefined,
): Promise<RunTurnOutcome> {
  const sofar = { text: turn.streamed_text, tokens: turn.streamed_tokens, lastSeq: turn.last_seq };
  const controller = new AbortController();
  let stopReason: "cancelled" | "lost" | "handed-off" | "unstored" | undefined;
  const stop = (reason: typeof stopReason) => {
    stopReason ??= reason;
    controller.abort();
  };
  void stored?.then((ok) => {
    if (!ok) stop("unstored");
  });
  const onJobAbort = () => stop(jobSignal.reason instanceof HandOff ? "handed-off" : "cancelled");
  if (jobSignal.aborted) onJobAbort();
  else jobSignal.addEventListener("abort", onJobAbort, { once: true });
  const unsubscribe = deps.bus.subscribe(Channel.cancel, (id) => {
    if (id === turn.id) stop("cancelled");
  });
  if (turn.cancel_requested_at) stop("cancelled");

  const released = deps.holdCore?.();
  const writer = new EventWriter({
    events: deps.events ?? new EventBatch(deps.pool),
    bus: deps.bus,
    turnId: turn.id,
    workerId: deps.workerId,
    lastSeq: sofar.lastSeq,
    flushMs: () => flushSpacing(deps.flushMs ?? DEFAULT_FLUSH_MS, deps.streams?.() ?? 1),
    onStop: stop,
    stored,
    onFirstWrite: released,
  });
  if (sofar.text) log.info({ chars: sofar.text.length }, "continuing a turn that an earlier worker left unfinished");
  try {
    let result: GenerateResult & { serverToolCalls: ServerToolCall[] };
    // The context recalled now, kept with the turn's end on the user message it was put before.
    let placed: { position: number; text: string } | undefined;
    try {
      const context = await contextFor(deps, turn, controller.signal, log);
      placed = context.recalled;
      // Beside the memories, so the transcript before them stays the cached prefix.
      const withContext = (memories: string) =>
        turn.response_format ? [memories, formatInstruction(turn.response_format)].filter(Boolean).join("\n\n") : memories;
      let spoke = false;
      const generate = (memories: string, earlier: boolean) =>
        turn.purpose === "completion"
          ? completeTurn(deps, turn, sofar, controller.signal, (text, tokens) => writer.push(text, tokens))
          : generateWithServerTools(
              deps,
              turn,
              buildPrompt(deps.persona, turn.prompt_messages, withContext(memories), turn.instructions, earlier),
              sofar,
              controller.signal,
              stored,
              {
                onText: (text, tokens) => {
                  spoke = true;
                  writer.push(text, tokens);
                },
                onReasoning: (text, tokens) => {
                  spoke = true;
                  writer.push(text, tokens, "reasoning");
                },
              },
            );
      // The request was checked against the context where it arrived (conversation/context-fit.ts);
      // the memories come on top of it, and give way when they do not fit: this turn's first (what
      // is kept from earlier turns is still the prefix the model holds), then all of them.
      const anchor = turn.prompt_messages.findLast((m) => m.role === "user");
      const kept = turn.prompt_messages.some((m) => m.context && m.role === "user" && m !== anchor);
      const tries: [memories: string, earlier: boolean][] = [[context.text, true]];
      if (context.text && kept) tries.push(["", true]);
      if (context.text || kept) tries.push(["", false]);
      for (let i = 0; ; i++) {
        const [memories, earlier] = tries[i]!;
        try {
          result = await generate(memories, earlier);
          break;
        } catch (err) {
          if (!(err instanceof ContextOverflow) || spoke || i + 1 === tries.length) throw err;
          log.info(
            { promptTokens: err.promptTokens, contextSize: err.contextSize, keepingEarlier: tries[i + 1]![1] },
            "the recalled memories do not fit the context beside the prompt; answering without them",
          );
          placed = undefined;
        }
      }
    } catch (err) {
      // Stopped before the first token (during recall, or while the model read its prompt): a
      // cancel like any other, with nothing said, not a failure.
      if (!stopReason) throw err;
      result = { text: "", finishReason: "stop", promptTokens: 0, completionTokens: 0, toolCalls: [], serverToolCalls: [] };
    }
    if (stored && !(await stored)) return "unstored";
    // A turn handed on leaves its text for the next worker; one that ends here writes the last
    // of it with its end.
    if (stopReason === "handed-off") await writer.flush();
    const tail = stopReason === "handed-off" ? undefined : await writer.drain();
    if (writer.failure) throw writer.failure;
    if (writer.lost || stopReason === "lost") return "lost";
    if (stopReason === "handed-off") return "handed-off";
    const content = sofar.text + result.text;
    const finishReason = stopReason === "cancelled" ? "cancelled" : result.finishReason;
    // Calls get ids here; the client answers each with a tool message naming it.
    const toolCalls =
      finishReason === "tool_calls"
        ? result.toolCalls.map((c) => ({ id: `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`, ...c }))
        : [];
    // Names and counts only: arguments are the conversation's content, and logs carry none.
    const broken = toolCalls.filter((c) => c.problems.length).map((c) => ({ id: c.id, name: c.name, problems: c.problems.length }));
    if (broken.length)
      log.warn(
        { turnId: turn.id, toolCalls: broken },
        "the model's tool call arguments break the tool's schema; returned with the problems",
      );
    // Forming the memory waits for nobody: a job, stored with the turn's end in one statement, so it is not lost.
    const memoryJob: RememberTurnJob = { kind: "remember-turn", turnId: turn.id };
    const closing = await finishTurn(
      deps.pool,
      turn.id,
      deps.workerId,
      {
        content,
        reasoning: result.reasoning,
        reasoningTokens: result.reasoningTokens,
        finishReason,
        promptTokens: result.promptTokens,
        cachedTokens: result.cachedTokens,
        completionTokens: sofar.tokens + result.completionTokens,
        toolCalls,
        serverToolCalls: result.serverToolCalls,
      },
      { role: "assistant", content, toolCalls: toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })) },
      {
        // A text completion is no conversation's: nothing to remember.
        memoryJob:
          finishReason === "cancelled" || turn.purpose === "completion"
            ? undefined
            : await sendStatement(deps.boss, MEMORY_QUEUE, memoryJob, { id: randomUUID() }),
        // Its job completes with it: the worker has nothing more to tell pg-boss (RunTurnOutcome).
        chatJob: { queue: INFERENCE_QUEUE, id: jobId },
        tail,
        context: placed,
      },
    );
    // The last text and the closing event ride on the signals, committed: a follower relays
    // them without reading them back. The last text may be a thought's (one that ended in calls,
    // with no reply after it): carried as the kind it was stored as.
    if (closing && tail)
      deps.bus.notify(Channel.turn, encodeTurnSignal(turn.id, { seq: tail.seq, kind: tail.kind ?? "delta", content: tail.content }));
    deps.bus.notify(Channel.turn, encodeTurnSignal(turn.id, closing));
    if (closing) deps.bus.notify(Channel.memory);
    if (!closing) return "lost";
    log.debug({ finishReason, tokens: result.completionTokens }, "turn finished");
    return finishReason === "cancelled" ? "cancelled" : "done";
  } finally {
    released?.();
    jobSignal.removeEventListener("abort", onJobAbort);
    unsubscribe();
  }
}

/**
 * A text completion (POST /v1/completions): the stored prompt as it is, no persona, no recall,
 * no tools; a worker that takes over a dead one's completion continues from the text streamed.
 */
async function completeTurn(
  deps: RunTurnDeps,
  turn: ClaimedTurn,
  sofar: { text: string; tokens: number },
  signal: AbortSignal,
  onText: (text: string, tokens: number) => void,
): Promise<GenerateResult & { serverToolCalls: ServerToolCall[] }> {
  const result = await deps.model.generate({
    messages: [],
    text: { prompt: (turn.prompt ?? "") + sofar.text, suffix: turn.suffix ?? undefined },
    maxTokens: Math.max(1, turn.max_tokens - sofar.tokens),
    temperature: turn.temperature ?? undefined,
    topP: turn.top_p ?? undefined,
    topK: turn.top_k ?? undefined,
    seed: turn.seed ?? undefined,
    stop: turn.stop,
    presencePenalty: turn.presence_penalty ?? undefined,
    frequencyPenalty: turn.frequency_penalty ?? undefined,
    logitBias: turn.logit_bias ?? undefined,
    signal,
    onText,
  });
  return { ...result, serverToolCalls: [] };
}

export interface ServerToolCall {
  name: string;
  arguments: string;
  result: string;
}

/**
 * Generates, and while the model calls only Psyche's own tools, runs them and generates again
 * with their results (up to the iteration limit). Client tools come back as the result's calls,
 * after any server calls made beside them have run.
 */
async function generateWithServerTools(
  deps: RunTurnDeps,
  turn: ClaimedTurn,
  prompt: PromptMessage[],
  sofar: { text: string; tokens: number },
  signal: AbortSignal,
  /** As generateTurn's: Psyche's own tools write nothing for a turn that was never stored. */
  stored: Promise<boolean> | undefined,
  { onText, onReasoning }: Pick<GenerateRequest, "onText" | "onReasoning">,
): Promise<GenerateResult & { serverToolCalls: ServerToolCall[] }> {
  const clientTools = turn.tools ?? [];
  const clientNames = new Set(clientTools.map((t) => t.name));
  const choice = turn.tool_choice ?? undefined;
  const server = deps.serverTools && offersServerTools(clientTools, choice) ? deps.serverTools : undefined;
  const tools = offeredTools(clientTools, choice, server?.specs);
  const isServerCall = (c: GeneratedToolCall) => !clientNames.has(c.name) && server?.has(c.name) === true;
  const limit = deps.serverToolIterations ?? 5;
  const serverToolCalls: ServerToolCall[] = [];
  let messages = prompt;
  let text = "";
  // The thoughts of every generation of the turn, one after another (a thought before a server tool's call, then the answer's).
  let reasoning = "";
  let reasoningTokens = 0;
  let completionTokens = 0;
  for (let iteration = 0; ; iteration++) {
    const result = await deps.model.generate({
      messages,
      partialResponse: iteration === 0 ? sofar.text : undefined,
      maxTokens: Math.max(1, turn.max_tokens - sofar.tokens - completionTokens),
      temperature: turn.temperature ?? undefined,
      topP: turn.top_p ?? undefined,
      topK: turn.top_k ?? undefined,
      seed: turn.seed ?? undefined,
      stop: turn.stop,
      // "required" asks for a call to one of the client's tools; after that the model chooses.
      tools: choice === "none" ? undefined : iteration === 0 && choice === "required" ? clientTools : tools.length ? tools : undefined,
      toolChoice: iteration === 0 ? choice : "auto",
      parallelToolCalls: turn.parallel_tool_calls ?? undefined,
      responseFormat: turn.response_format ?? undefined,
      presencePenalty: turn.presence_penalty ?? undefined,
      frequencyPenalty: turn.frequency_penalty ?? undefined,
      logitBias: turn.logit_bias ?? undefined,
      thoughtBudget: turn.thought_budget ?? undefined,
      reasoningEffort: turn.thought_effort ?? undefined,
      conversation: turn.conversation_id ?? undefined,
      signal,
      onText,
      onReasoning,
    });
    text += result.text;
    reasoning += (reasoning && result.reasoning ? "\n\n" : "") + (result.reasoning ?? "");
    reasoningTokens += result.reasoningTokens ?? 0;
    completionTokens += result.completionTokens;
    const mine = result.toolCalls.filter(isServerCall);
    const theirs = result.toolCalls.filter((c) => !isServerCall(c));
    const done = (finishReason: GenerateResult["finishReason"]) => ({
      ...result,
      text,
      reasoning,
      reasoningTokens,
      completionTokens,
      toolCalls: theirs,
      finishReason,
      serverToolCalls,
    });
    if (mine.length === 0 || signal.aborted || (stored && !(await stored)))
      return done(result.finishReason === "tool_calls" && theirs.length === 0 ? "stop" : result.finishReason);
    const ids = mine.map((_, j) => `psyche_${iteration}_${j}`);
    const results: string[] = [];
    for (const call of mine) {
      const output = await server!.run(call, { turnId: turn.id, signal, scope: turn.scope ?? DEFAULT_SCOPE });
      results.push(output);
      serverToolCalls.push({ name: call.name, arguments: call.arguments, result: output });
    }
    if (theirs.length) return done("tool_calls");
    if (iteration + 1 >= limit) return done("stop");
    messages = [
      ...messages,
      { role: "assistant", content: result.text, toolCalls: mine.map((c, j) => ({ id: ids[j]!, name: c.name, arguments: c.arguments })) },
      ...mine.map((_, j): PromptMessage => ({ role: "tool", content: results[j]!, toolCallId: ids[j]! })),
    ];
  }
}

// Whether a turn's prompt fits the model's context, decided where the request arrives, before
// anything is stored: a prompt that does not fit is refused with the API's own error (OpenAI's
// context_length_exceeded; Anthropic's "prompt is too long", on which Claude Code compacts its
// history), never an engine failure mid-turn. The reply budget is clamped to what the context
// leaves, so the engine never has to shift its context (inference/llama-engine.ts).
import { ContextOverflow } from "../errors.js";
import type { ToolChoice, ToolSpec } from "../tools/types.js";
import { offeredTools } from "../tools/offered.js";

/** What a process knows of the model's context; either may be unknown (then nothing is checked). */
export interface ContextLimits {
  /** Tokens `text` takes in the model's vocabulary. */
  countTokens?: ((text: string) => Promise<number | undefined>) | undefined;
  /** Tokens of context one conversation has (per sequence). */
  contextSize?: (() => Promise<number | undefined>) | undefined;
  /** The system prompt the worker puts before every transcript. */
  persona?: string | undefined;
  /** Psyche's own tools, offered beside a client's (tools/offered.ts): their definitions are in the prompt too. */
  serverTools?: readonly ToolSpec[] | undefined;
}

/** The limits with the context's size read: what a turn's transaction checks against. */
export interface KnownLimits {
  countTokens?: ((text: string) => Promise<number | undefined>) | undefined;
  contextSize?: number | undefined;
  persona?: string | undefined;
  serverTools?: readonly ToolSpec[] | undefined;
}

/**
 * What may wait, done before a turn's transaction opens. The size may come from a query
 * (db/sql/workers.ts), and on the embedded database a query on another connection waits for an
 * open transaction to end, so asked inside one it would wait forever. A web process loads the
 * model's vocabulary at its first count (processes/web.ts): counting nothing here loads
 * it, so the count inside the transaction is quick.
 */
export async function knownLimits(limits: ContextLimits): Promise<KnownLimits> {
  const none = { persona: limits.persona, serverTools: limits.serverTools };
  if (!limits.countTokens || !limits.contextSize) return none;
  const contextSize = await limits.contextSize();
  if (contextSize === undefined || (await limits.countTokens("")) === undefined) return none;
  return { ...none, countTokens: limits.countTokens, contextSize };
}

export interface PromptText {
  content: string;
  toolCalls?: readonly { name: string; arguments: string }[] | null | undefined;
}

/** The chat template's markup around each message (ChatML: `<|im_start|>role\n`, `<|im_end|>\n`). */
const MARKUP_PER_MESSAGE = 5;

/** Tokens the prompt takes: each message's text and calls, the tools' definitions, the template's markup. */
export async function promptTokens(
  count: (text: string) => Promise<number | undefined>,
  messages: readonly PromptText[],
  tools: readonly unknown[] | null | undefined,
): Promise<number | undefined> {
  const parts = messages.map((m) =>
    m.toolCalls?.length ? `${m.content}\n${m.toolCalls.map((c) => `${c.name}${c.arguments}`).join("\n")}` : m.content,
  );
  if (tools?.length) parts.push(JSON.stringify(tools));
  // Each part on its own, and a token for each newline between them: a coding agent resends
  // the same system prompt and tools every turn, and the engine's tokenizer keeps long texts
  // it has seen (inference/token-cache.ts), where the parts joined would be new each turn.
  const counts = await Promise.all(parts.map((part) => count(part)));
  if (counts.some((n) => n === undefined)) return undefined;
  const counted = counts.reduce((sum: number, n) => sum + n!, Math.max(0, parts.length - 1));
  return counted + MARKUP_PER_MESSAGE * (messages.length + 1);
}

/**
 * The reply budget this prompt leaves: `maxTokens`, or what is left of the context when that
 * is less. A prompt that leaves no room for a reply is a ContextOverflow. Counted: the persona,
 * the messages, and every tool the model will be offered, the client's and Psyche's own. The
 * memories recalled for the turn come later and give way when they do not fit
 * (conversation/run-turn.ts); the engine checks the prompt again as it renders it.
 */
export async function fitReply(
  limits: KnownLimits,
  messages: readonly PromptText[],
  tools: { client: readonly ToolSpec[] | null | undefined; choice?: ToolChoice | null | undefined },
  maxTokens: number,
): Promise<number> {
  const size = limits.contextSize;
  if (!limits.countTokens || size === undefined) return maxTokens;
  const offered = offeredTools(tools.client ?? [], tools.choice, limits.serverTools);
  const used = await promptTokens(limits.countTokens, limits.persona ? [{ content: limits.persona }, ...messages] : messages, offered);
  if (used === undefined) return maxTokens;
  if (used >= size) throw new ContextOverflow(used, size);
  return Math.max(1, Math.min(maxTokens, size - used));
}

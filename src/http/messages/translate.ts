// An Anthropic Messages request as a turn request (conversation/turn-request.ts): its system
// prompt, messages and tools become the messages and tools every other API's turn has, and
// nothing below this file knows which API asked. Pure: the body and the headers in.
import type { TurnRequest } from "../../conversation/turn-request.js";
import type { NewMessage } from "../../db/sql/conversations.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { requestTools } from "../../tools/request-tools.js";
import type { ToolChoice, ToolSpec } from "../../tools/types.js";
import { type HeaderOf, namedConversation, type TranslateOptions } from "../chat/translate.js";
import { anthropicThinking } from "../thinking.js";
import { fieldsToIgnore, withoutFields } from "../request-fields.js";
import { type AnthropicMessage, type CountTokensRequest, MESSAGES_NOT_HONOURED, MessagesRequestSchema } from "../schemas/messages.js";

/**
 * Claude Code's system prompt opens with a billing line whose `cch=` stamp changes with every
 * request: left as it is, the stored transcript would never match the next request's, and a
 * cached prefix would end at the first line. Written with a fixed stamp instead.
 */
export function steadySystem(text: string): string {
  return text.replace(/^(x-anthropic-billing-header:[^\n]*?\bcch=)[0-9A-Za-z]+(;?)/m, "$100000$2");
}

/** The system prompt as one text (a string, or text blocks joined). */
export function systemText(system: CountTokensRequest["system"]): string | null {
  if (system === undefined) return null;
  const text = typeof system === "string" ? system : system.map((b) => b.text).join("\n");
  return text ? steadySystem(text) : null;
}

/**
 * The conversation an agent names: Claude Code puts its session id in metadata.user_id
 * ("user_<hash>_account_<uuid>_session_<uuid>"). Identity is never guessed from a transcript.
 */
export function agentConversation(userId: string | null | undefined, sessionHeader?: string | undefined): string | undefined {
  const uuid = "([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})";
  // Claude Code 2 sends the session in a header, and in user_id as JSON ({"session_id": ...});
  // earlier versions as user_..._session_<uuid>.
  const session =
    (sessionHeader && new RegExp(`^${uuid}$`, "i").exec(sessionHeader)) ||
    (userId ? new RegExp(`session(?:_|_id"\\s*:\\s*")${uuid}`, "i").exec(userId) : null);
  return session ? `claude-code-${session[1]!.toLowerCase()}` : undefined;
}

const toolResultText = (content: string | { text: string }[] | undefined) =>
  typeof content === "string" ? content : (content ?? []).map((b) => b.text).join("\n");

/** The turn's messages: system, then each message's blocks as user, assistant and tool messages. */
export function turnMessages(system: CountTokensRequest["system"], messages: readonly AnthropicMessage[]): NewMessage[] {
  const out: NewMessage[] = [];
  const sys = systemText(system);
  if (sys) out.push({ role: "system", content: sys });
  for (const [i, m] of messages.entries()) {
    if (typeof m.content === "string") {
      out.push({ role: m.role, content: m.content });
      continue;
    }
    if (m.role === "system") {
      if (m.content.some((b) => b.type !== "text"))
        throw invalidRequest(`messages[${i}]: a system message holds text blocks only`, `messages[${i}].content`, "invalid_value");
      out.push({ role: "system", content: m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n") });
      continue;
    }
    if (m.role === "assistant") {
      const text = m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const calls = m.content.flatMap((b) =>
        b.type === "tool_use" ? [{ id: b.id, name: b.name, arguments: JSON.stringify(b.input) }] : [],
      );
      if (m.content.some((b) => b.type === "tool_result"))
        throw invalidRequest(`messages[${i}]: tool_result blocks belong in a user message`, `messages[${i}].content`, "invalid_value");
      out.push({ role: "assistant", content: text, ...(calls.length ? { toolCalls: calls } : {}) });
      continue;
    }
    // A user message: its tool results first (they answer the calls before it), then its words.
    for (const b of m.content) {
      if (b.type === "tool_use")
        throw invalidRequest(`messages[${i}]: tool_use blocks belong in an assistant message`, `messages[${i}].content`, "invalid_value");
      // is_error is kept in the words the model reads: the tool failed, and said this.
      if (b.type === "tool_result")
        out.push({
          role: "tool",
          toolCallId: b.tool_use_id,
          content: b.is_error ? `Error: ${toolResultText(b.content)}` : toolResultText(b.content),
        });
    }
    const text = m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
    if (text || !m.content.some((b) => b.type === "tool_result")) out.push({ role: "user", content: text });
  }
  return out;
}

/** Custom tools and the choice, checked as the chat API checks them; server tools (a `type` other than custom) are returned apart, to ignore and name. */
export function turnTools(req: Pick<CountTokensRequest, "tools" | "tool_choice">): {
  tools: ToolSpec[] | null;
  toolChoice: ToolChoice | null;
  serverTools: string[];
} {
  const custom: { type: "function"; function: { name: string; description?: string; parameters: Record<string, unknown> } }[] = [];
  const serverTools: string[] = [];
  for (const [i, t] of (req.tools ?? []).entries()) {
    if (t.type !== undefined && t.type !== "custom") {
      serverTools.push(`tools[${i}] (${String(t.type).slice(0, 64)})`);
      continue;
    }
    if (typeof t.name !== "string" || typeof t.input_schema !== "object" || t.input_schema === null)
      throw invalidRequest(`tools[${i}]: a tool needs a name and an input_schema`, `tools[${i}]`, "invalid_value");
    custom.push({
      type: "function",
      function: {
        name: t.name,
        ...(typeof t.description === "string" ? { description: t.description } : {}),
        parameters: t.input_schema as Record<string, unknown>,
      },
    });
  }
  const c = req.tool_choice;
  const choice =
    c === undefined
      ? undefined
      : c.type === "auto"
        ? "auto"
        : c.type === "any"
          ? "required"
          : c.type === "none"
            ? "none"
            : { type: "function" as const, function: { name: c.name } };
  try {
    return { ...requestTools({ tools: custom, tool_choice: choice }), serverTools };
  } catch (err) {
    // Name the field as Anthropic's API spells it.
    const e = err as { param?: string | null; message: string };
    if (typeof e.param === "string") e.param = e.param.replace(/\.function\.parameters$/, ".input_schema");
    throw err;
  }
}

export interface MessagesTranslation {
  request: TurnRequest;
  /** Fields ignored (Anthropic's server tools among them), to name in X-Psyche-Ignored-Fields. */
  ignored: string[];
}

export function messagesRequest(body: Record<string, unknown>, header: HeaderOf, o: TranslateOptions): MessagesTranslation {
  const ignored = fieldsToIgnore(body, { known: MessagesRequestSchema.shape, notHonoured: MESSAGES_NOT_HONOURED }, o.strict);
  const parsed = MessagesRequestSchema.safeParse(withoutFields(body, ignored));
  if (!parsed.success) throw fromZodError(parsed.error);
  const req = parsed.data;
  const { tools, toolChoice, serverTools } = turnTools(req);
  if (serverTools.length && o.strict)
    throw invalidRequest(`${serverTools[0]}: Anthropic's server tools are not available on this server`, "tools", "unsupported_parameter");
  const named = header("x-psyche-conversation");
  const agent = agentConversation(req.metadata?.user_id, header("x-claude-code-session-id"));
  const disableParallel =
    req.tool_choice && "disable_parallel_tool_use" in req.tool_choice ? req.tool_choice.disable_parallel_tool_use : undefined;
  const request: TurnRequest = {
    model: req.model,
    messages: turnMessages(req.system, req.messages),
    tools,
    toolChoice,
    parallelToolCalls: disableParallel === undefined ? null : !disableParallel,
    responseFormat: null,
    sampling: {
      temperature: req.temperature ?? null,
      topP: req.top_p ?? null,
      topK: req.top_k ?? null,
      seed: null,
      stop: req.stop_sequences ?? [],
      presencePenalty: null,
      frequencyPenalty: null,
      logitBias: null,
    },
    budget: { maxTokens: req.max_tokens, field: "max_tokens" },
    instructions: null,
    thinking: anthropicThinking(req.thinking),
    conversation: named !== undefined ? namedConversation(named, "X-Psyche-Conversation") : namedConversation(agent, "metadata.user_id"),
    scope: o.scope,
    purpose: "chat",
    stream: req.stream ?? false,
  };
  return { request, ignored: [...ignored, ...serverTools] };
}

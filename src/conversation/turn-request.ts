// What every surface asks of a turn, whichever API it speaks: the chat API, Responses,
// Anthropic's Messages and MCP each translate their request into this (src/http/*/translate.ts,
// mcp/chat-tools.ts), and conversation/open-turn.ts takes it from there. Nothing below the
// translations knows which API asked.
import type { NewMessage } from "../db/sql/conversations.js";
import type { StoredInputItem } from "../db/sql/responses.js";
import type { TurnPurpose } from "../db/sql/turns.js";
import type { ResponseFormat } from "../tools/response-format.js";
import type { ToolChoice, ToolSpec } from "../tools/types.js";
import type { ReasoningEffort } from "../inference/engine.js";

/** Which conversation a turn belongs to (docs/api.md, "Conversations"). */
export type ConversationRef =
  /** None named: the messages are the whole transcript of a conversation of their own. Never guessed (ARCHITECTURE §2). */
  | { kind: "own" }
  /**
   * A named conversation, made on first use. The messages are its whole transcript, or only what
   * is new (conversation/new-messages.ts decides).
   */
  | { kind: "named"; id: string }
  /** Right after a stored turn (Responses' previous_response_id): every message is new, and later ones are superseded (a branch). */
  | { kind: "after"; turnId: string }
  /**
   * One result (the request's one tool message) for a call of the conversation's last reply
   * (MCP's add_tool_result). The turn is queued with the last of them, generated with the
   * settings of the turn that made the calls; before that, the result is stored and the turn
   * waits (OpenedTurn.waitingFor).
   */
  | { kind: "tool-result"; id: string };

/** How the reply is sampled. Null: the model's default. */
export interface Sampling {
  temperature: number | null;
  topP: number | null;
  /** Sample from the k likeliest tokens (Anthropic's top_k). */
  topK: number | null;
  seed: number | null;
  stop: string[];
  presencePenalty: number | null;
  frequencyPenalty: number | null;
  /** Token id -> bias added to its logit. */
  logitBias: Record<string, number> | null;
}

export const DEFAULT_SAMPLING: Sampling = {
  temperature: null,
  topP: null,
  topK: null,
  seed: null,
  stop: [],
  presencePenalty: null,
  frequencyPenalty: null,
  logitBias: null,
};

/** The request as the Responses API keeps it beside its turn (GET /v1/responses/:id/input_items). */
export interface ResponseRecord {
  items: StoredInputItem[];
  store: boolean;
  metadata: Record<string, string> | null;
}

export interface TurnRequest {
  /** The model the client named: the one model serves every name, unless --strict-params. */
  model: string;
  messages: NewMessage[];
  tools: ToolSpec[] | null;
  toolChoice: ToolChoice | null;
  /** false: at most one call per reply. */
  parallelToolCalls: boolean | null;
  /** The reply must be JSON (of a schema); held to it by a grammar. */
  responseFormat: ResponseFormat | null;
  sampling: Sampling;
  /** The reply's token budget as asked (null: the server's), and the field that asked it, for errors. */
  budget: { maxTokens: number | null; field: string };
  /** A system message for this turn only, after the persona (Responses' instructions). */
  instructions: string | null;
  conversation: ConversationRef;
  /** The scope a new conversation is made in, and the one a named conversation must be in (src/scope.ts). */
  scope: string;
  /** Why it is asked for (chat, or Hermes's exploration of a workspace). */
  purpose: TurnPurpose;
  /** Whether the client reads the reply as a stream (stored with the turn; the relay is the surface's). */
  stream: boolean;
  /**
   * The thought's budget the client asked for (src/http/thinking.ts): 0 turns thinking off, null
   * leaves the family's default; the field that asked, named as ignored where the model has no
   * thinking channel; and the effort a family that renders one in its prompt is told (gpt-oss).
   * Null: none asked.
   */
  thinking: { budget: number | null; field: string; effort: ReasoningEffort | null } | null;
  /** Kept beside the turn for the Responses API. */
  record?: ResponseRecord | undefined;
}

/** A turn request with every optional part at its default: what a surface that asks little (MCP's chat) starts from. */
export function turnRequest(parts: Pick<TurnRequest, "model" | "messages" | "conversation" | "scope"> & Partial<TurnRequest>): TurnRequest {
  return {
    tools: null,
    toolChoice: null,
    parallelToolCalls: null,
    responseFormat: null,
    sampling: DEFAULT_SAMPLING,
    budget: { maxTokens: null, field: "max_tokens" },
    instructions: null,
    thinking: null,
    purpose: "chat",
    stream: false,
    ...parts,
  };
}

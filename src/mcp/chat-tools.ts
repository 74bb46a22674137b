// MCP's chat and add_tool_result: a conversation with Psyche by id. The reply comes back
// whole; client tool calls come back for the caller to run and answer with add_tool_result.
import { ScopeSchema } from "../scope.js";
import { EVERY_SCOPE, type McpScope, scopeFor } from "./scope-access.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { finishedTurn } from "../conversation/finished-turn.js";
import { openTurn } from "../conversation/open-turn.js";
import { DEFAULT_SAMPLING, type TurnRequest, turnRequest } from "../conversation/turn-request.js";
import type { Turn } from "../db/sql/turns.js";
import type { WebServices } from "../web-services.js";
import { ConversationIdSchema } from "../conversation-id.js";
import { requestTools } from "../tools/request-tools.js";
import { ToolChoiceSchema, ToolDefinitionSchema } from "../tools/schemas.js";
import { guarded, result } from "./result.js";

const ReplyShape = {
  conversation_id: z.string(),
  turn_id: z.string(),
  reply: z.string(),
  finish_reason: z.enum(["stop", "length", "tool_calls", "cancelled"]),
  tool_calls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number() }),
};

function reply(turn: Turn) {
  const toolCalls = (turn.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  const structured = {
    conversation_id: turn.conversation_id,
    turn_id: turn.id,
    reply: turn.content ?? "",
    finish_reason: turn.finish_reason ?? "stop",
    tool_calls: toolCalls,
    usage: { prompt_tokens: turn.prompt_tokens ?? 0, completion_tokens: turn.completion_tokens ?? 0 },
  };
  const calls = toolCalls.length
    ? `\n\nTool calls for you to run, each answered with add_tool_result:\n${toolCalls.map((c) => `- ${c.id}: ${c.name}(${c.arguments})`).join("\n")}`
    : "";
  return { structured, text: `${structured.reply}${calls}\n\n(conversation_id: ${turn.conversation_id})` };
}

const scopeArg = ScopeSchema.optional().describe(
  "The scope the conversation is in (its memories and default's). Default: the request's X-Psyche-Scope, else default",
);

const ChatArgsShape = {
  scope: scopeArg,
  message: z.string().min(1).max(100_000).describe("What you say to Psyche"),
  conversation_id: ConversationIdSchema.optional().describe("Continue this conversation; omitted: a new one"),
  tools: z.array(ToolDefinitionSchema).max(128).optional().describe("Functions Psyche may ask you to call, OpenAI's format"),
  tool_choice: ToolChoiceSchema.optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
};
export type ChatArgs = z.infer<z.ZodObject<typeof ChatArgsShape>>;

const ToolResultArgsShape = {
  scope: scopeArg,
  conversation_id: ConversationIdSchema,
  tool_call_id: z.string().min(1).max(128),
  result: z.string().max(100_000).describe("The tool's output, as text (JSON is fine)"),
};
export type ToolResultArgs = z.infer<z.ZodObject<typeof ToolResultArgsShape>>;

/** MCP's chat as a turn request (conversation/turn-request.ts): `scope` is what the caller may open (mcp/scope-access.ts). */
export function chatToolRequest(args: ChatArgs, scope: string, model: string): TurnRequest {
  const { tools, toolChoice } = requestTools({ tools: args.tools, tool_choice: args.tool_choice });
  return turnRequest({
    model,
    messages: [{ role: "user", content: args.message }],
    tools,
    toolChoice,
    sampling: { ...DEFAULT_SAMPLING, temperature: args.temperature ?? null },
    budget: { maxTokens: args.max_tokens ?? null, field: "max_tokens" },
    conversation: args.conversation_id === undefined ? { kind: "own" } : { kind: "named", id: args.conversation_id },
    scope,
  });
}

/** MCP's add_tool_result as a turn request: one result, the turn queued with the last its reply waits for. */
export function toolResultRequest(args: ToolResultArgs, scope: string, model: string): TurnRequest {
  return turnRequest({
    model,
    messages: [{ role: "tool", content: args.result, toolCallId: args.tool_call_id }],
    conversation: { kind: "tool-result", id: args.conversation_id },
    scope,
  });
}

export function registerChatTools(server: McpServer, deps: WebServices, access: McpScope = EVERY_SCOPE): void {
  server.registerTool(
    "chat",
    {
      title: "Chat with Psyche",
      description:
        "Send Psyche a message and get its reply. Pass conversation_id to continue a conversation (the reply gives one for a new conversation). " +
        "With tools (OpenAI function definitions) the reply may hold tool calls: run them and answer each with add_tool_result.",
      inputSchema: ChatArgsShape,
      outputSchema: ReplyShape,
    },
    guarded("chat", deps.log, async (args, extra) => {
      const turn = await openTurn(deps, chatToolRequest(args, scopeFor(access, args.scope), deps.modelId));
      const { structured, text } = reply(await finishedTurn(deps, turn.follower, extra.signal));
      return result(structured, text);
    }),
  );

  server.registerTool(
    "add_tool_result",
    {
      title: "Answer a tool call",
      description:
        "Give Psyche the result of a tool call from its reply. Once every call of that reply has its result, Psyche goes on and this returns its next reply; until then it returns which calls still wait.",
      inputSchema: ToolResultArgsShape,
      outputSchema: {
        state: z.enum(["waiting", "replied"]),
        waiting_for: z.array(z.string()),
        ...Object.fromEntries(Object.entries(ReplyShape).map(([k, v]) => [k, v.optional()])),
      },
    },
    guarded("add_tool_result", deps.log, async (args, extra) => {
      const turn = await openTurn(deps, toolResultRequest(args, scopeFor(access, args.scope), deps.modelId));
      if (turn.waitingFor.length) {
        return result(
          { state: "waiting", waiting_for: turn.waitingFor },
          `Recorded. Psyche goes on once these calls have results too: ${turn.waitingFor.join(", ")}`,
        );
      }
      const { structured, text } = reply(await finishedTurn(deps, turn.follower, extra.signal));
      return result({ state: "replied", waiting_for: [], ...structured }, text);
    }),
  );
}

// MCP's chat and add_tool_result: a conversation with Psyche by id. The reply comes back
// whole; client tool calls come back for the caller to run and answer with add_tool_result.
import { ScopeSchema } from "../scope.js";
import { EVERY_SCOPE, type McpScope, scopeFor } from "./scope-access.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { addToolResult } from "../conversation/add-tool-result.js";
import { finishedTurn } from "../conversation/finished-turn.js";
import { replyBudget, startFollowed } from "../conversation/followed-turn.js";
import { startTurn } from "../conversation/start-turn.js";
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

export function registerChatTools(server: McpServer, deps: WebServices, access: McpScope = EVERY_SCOPE): void {
  server.registerTool(
    "chat",
    {
      title: "Chat with Psyche",
      description:
        "Send Psyche a message and get its reply. Pass conversation_id to continue a conversation (the reply gives one for a new conversation). " +
        "With tools (OpenAI function definitions) the reply may hold tool calls: run them and answer each with add_tool_result.",
      inputSchema: {
        scope: ScopeSchema.optional().describe(
          "The scope the conversation is in (its memories and default's). Default: the request's X-Psyche-Scope, else default",
        ),
        message: z.string().min(1).max(100_000).describe("What you say to Psyche"),
        conversation_id: ConversationIdSchema.optional().describe("Continue this conversation; omitted: a new one"),
        tools: z.array(ToolDefinitionSchema).max(128).optional().describe("Functions Psyche may ask you to call, OpenAI's format"),
        tool_choice: ToolChoiceSchema.optional(),
        max_tokens: z.number().int().positive().optional(),
        temperature: z.number().min(0).max(2).optional(),
      },
      outputSchema: ReplyShape,
    },
    guarded("chat", deps.log, async (args, extra) => {
      const { tools, toolChoice } = requestTools({ tools: args.tools, tool_choice: args.tool_choice });
      const maxTokens = replyBudget(args.max_tokens, deps.maxTokens, "max_tokens", deps.strictParams);
      const { follower } = await startFollowed(deps, (turnId) =>
        startTurn(deps, {
          turnId,
          conversationId: args.conversation_id,
          scope: scopeFor(access, args.scope),
          messages: [{ role: "user", content: args.message }],
          tools,
          toolChoice,
          parallelToolCalls: null,
          model: deps.modelId,
          temperature: args.temperature ?? null,
          topP: null,
          maxTokens,
          seed: null,
          stop: [],
          stream: false,
        }),
      );
      const { structured, text } = reply(await finishedTurn(deps, follower, extra.signal));
      return result(structured, text);
    }),
  );

  server.registerTool(
    "add_tool_result",
    {
      title: "Answer a tool call",
      description:
        "Give Psyche the result of a tool call from its reply. Once every call of that reply has its result, Psyche goes on and this returns its next reply; until then it returns which calls still wait.",
      inputSchema: {
        scope: ScopeSchema.optional().describe(
          "The scope the conversation is in (its memories and default's). Default: the request's X-Psyche-Scope, else default",
        ),
        conversation_id: ConversationIdSchema,
        tool_call_id: z.string().min(1).max(128),
        result: z.string().max(100_000).describe("The tool's output, as text (JSON is fine)"),
      },
      outputSchema: {
        state: z.enum(["waiting", "replied"]),
        waiting_for: z.array(z.string()),
        ...Object.fromEntries(Object.entries(ReplyShape).map(([k, v]) => [k, v.optional()])),
      },
    },
    guarded("add_tool_result", deps.log, async (args, extra) => {
      const { follower, started: outcome } = await startFollowed(deps, (turnId) =>
        addToolResult(deps, {
          conversationId: args.conversation_id,
          toolCallId: args.tool_call_id,
          content: args.result,
          turnId,
          defaults: { model: deps.modelId, maxTokens: deps.maxTokens },
          scope: scopeFor(access, args.scope),
        }),
      );
      if (outcome.state === "waiting") {
        follower.close();
        return result(
          { state: "waiting", waiting_for: outcome.waitingFor },
          `Recorded. Psyche goes on once these calls have results too: ${outcome.waitingFor.join(", ")}`,
        );
      }
      const { structured, text } = reply(await finishedTurn(deps, follower, extra.signal));
      return result({ state: "replied", waiting_for: [], ...structured }, text);
    }),
  );
}

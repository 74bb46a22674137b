// Tools in a chat request: checked here (a bad schema or choice is a 400 before anything is
// stored), and tool calls rendered in OpenAI's shape.
import type { TurnTool, TurnToolCall, TurnToolChoice } from "../db/sql/turns.js";
import { schemaProblem } from "../inference/tool-arguments.js";
import { toGrammarSchema, ToolSchemaError } from "../inference/tool-schema.js";
import { invalidRequest } from "./errors.js";
import type { ChatCompletionRequest } from "./schemas/chat.js";

export function requestTools(req: Pick<ChatCompletionRequest, "tools" | "tool_choice">): { tools: TurnTool[] | null; toolChoice: TurnToolChoice | null } {
  const tools = (req.tools ?? []).map((t, i): TurnTool => {
    const { name, description, parameters } = t.function;
    try {
      toGrammarSchema(parameters);
    } catch (err) {
      if (err instanceof ToolSchemaError) throw invalidRequest(`tools[${i}].function.parameters: ${err.message}`, `tools[${i}].function.parameters`, "invalid_tool_schema");
      throw err;
    }
    const problem = schemaProblem(parameters);
    if (problem) throw invalidRequest(`tools[${i}].function.parameters: ${problem}`, `tools[${i}].function.parameters`, "invalid_tool_schema");
    return { name, ...(description ? { description } : {}), ...(parameters ? { parameters } : {}) };
  });
  const names = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw invalidRequest(`two tools are named "${t.name}"`, "tools", "invalid_value");
    names.add(t.name);
  }
  const choice = req.tool_choice ?? null;
  if (choice === null) return { tools: tools.length ? tools : null, toolChoice: null };
  if (typeof choice === "object") {
    if (!names.has(choice.function.name)) throw invalidRequest(`tool_choice names "${choice.function.name}", which is not among the tools`, "tool_choice", "invalid_value");
    return { tools, toolChoice: { name: choice.function.name } };
  }
  if (choice === "required" && tools.length === 0) throw invalidRequest('tool_choice "required" needs tools', "tool_choice", "invalid_value");
  return { tools: tools.length ? tools : null, toolChoice: choice };
}

/** OpenAI's message.tool_calls. */
export function toolCallsJson(calls: readonly TurnToolCall[]) {
  return calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }));
}

// Tools offered in a request (the chat API, MCP's chat tool), checked before anything is
// stored: a schema the grammar or the validator cannot use, two tools of one name, or a
// choice that names no tool is a 400 that names the field.
import type { z } from "zod";
import { invalidRequest } from "../errors.js";
import { schemaProblem } from "./arguments.js";
import { toGrammarSchema, ToolSchemaError } from "./grammar-schema.js";
import type { ToolChoiceSchema, ToolDefinitionSchema } from "./schemas.js";
import type { ToolChoice, ToolSpec } from "./types.js";

export interface RequestedTools {
  tools?: z.infer<typeof ToolDefinitionSchema>[] | null | undefined;
  tool_choice?: z.infer<typeof ToolChoiceSchema> | null | undefined;
}

export function requestTools(req: RequestedTools): { tools: ToolSpec[] | null; toolChoice: ToolChoice | null } {
  const tools = (req.tools ?? []).map((t, i): ToolSpec => {
    const { name, description, parameters } = t.function;
    try {
      toGrammarSchema(parameters);
    } catch (err) {
      if (err instanceof ToolSchemaError)
        throw invalidRequest(`tools[${i}].function.parameters: ${err.message}`, `tools[${i}].function.parameters`, "invalid_tool_schema");
      throw err;
    }
    const problem = schemaProblem(parameters);
    if (problem)
      throw invalidRequest(`tools[${i}].function.parameters: ${problem}`, `tools[${i}].function.parameters`, "invalid_tool_schema");
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
    if (!names.has(choice.function.name))
      throw invalidRequest(`tool_choice names "${choice.function.name}", which is not among the tools`, "tool_choice", "invalid_value");
    return { tools, toolChoice: { name: choice.function.name } };
  }
  if (choice === "required" && tools.length === 0)
    throw invalidRequest('tool_choice "required" needs tools', "tool_choice", "invalid_value");
  return { tools: tools.length ? tools : null, toolChoice: choice };
}

// Checks a call's arguments against the tool's own JSON Schema, after generation: the grammar
// guarantees JSON of the right shape, not what it cannot express (numeric bounds, patterns,
// formats, a null the grammar allowed for an optional property).
import type { GeneratedToolCall, ToolSpec } from "./types.js";
import { validatorFor } from "./validator.js";

/** What is wrong with a call's arguments, as readable lines; empty when they are valid. */
export function argumentProblems(tools: readonly ToolSpec[], call: Pick<GeneratedToolCall, "name" | "arguments">): string[] {
  const tool = tools.find((t) => t.name === call.name);
  if (!tool) return [`no tool named "${call.name}"`];
  let args: unknown;
  try {
    args = JSON.parse(call.arguments);
  } catch (err) {
    return [`arguments are not JSON: ${(err as Error).message}`];
  }
  const validate = validatorFor(tool.parameters ?? {});
  if (typeof validate === "string") return [`the tool's schema is ${validate}`];
  if (validate(args)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "arguments"} ${e.message ?? "is invalid"}`);
}

/** Why a tool's parameters schema cannot be used, or undefined when it can. */
export function schemaProblem(parameters: Record<string, unknown> | undefined): string | undefined {
  const v = validatorFor(parameters ?? {});
  return typeof v === "string" ? `the tool's schema is ${v}` : undefined;
}

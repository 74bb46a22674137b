// OpenAI's function tools as requests carry them (the chat API's tools[] and tool_choice, MCP's
// chat tool): one schema for every surface that accepts them.
import { z } from "zod";

const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const functionName = z.string().regex(FUNCTION_NAME, "function names are 1-64 letters, digits, _ and -");

/** A function the client offers the model (OpenAI's tools[]). */
export const ToolDefinitionSchema = z.object({
  type: z.literal("function", { error: "only function tools are supported" }),
  function: z.object({
    name: functionName,
    description: z.string().max(4000).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

export const ToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: functionName }) }),
]);


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
    // Any length the body limit allows: coding agents describe their tools at length.
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});

export const ToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.object({ type: z.literal("function"), function: z.object({ name: functionName }) }),
]);

/** A call's arguments as OpenAI carries them: a JSON object, in a string. */
export const JsonObjectStringSchema = z.string().refine((a) => {
  try {
    const v: unknown = JSON.parse(a);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}, "must be a JSON object in a string");

/** Sampling controls both APIs take (OpenAI's presence_penalty, frequency_penalty, logit_bias). */
export const PenaltySchema = z.number().min(-2).max(2);
export const LogitBiasSchema = z
  .record(z.string(), z.number().min(-100).max(100))
  .refine((b) => Object.keys(b).every((k) => /^\d{1,9}$/.test(k)), "logit_bias keys must be token ids (integers, as strings)")
  .refine((b) => Object.keys(b).length <= 300, "logit_bias holds at most 300 tokens");

// Structured output (OpenAI's response_format): the reply is JSON, or JSON that matches the
// client's schema. The schema becomes the generation's grammar, as a forced tool call's does
// (tools/grammar-schema.ts); what a grammar cannot enforce is checked after generation and
// reported as a tool call's problems are (tools/arguments.ts).
import { z } from "zod";
import { validatorFor } from "./validator.js";
import { invalidRequest } from "../errors.js";
import { toGrammarSchema, ToolSchemaError } from "./grammar-schema.js";

/** A reply's required form; null (or OpenAI's `{"type": "text"}`) is free text. */
export type ResponseFormat =
  { type: "json_object" } | { type: "json_schema"; name: string; schema: Record<string, unknown>; strict: boolean };

export const ResponseFormatSchema = z.discriminatedUnion(
  "type",
  [
    z.object({ type: z.literal("text") }),
    z.object({ type: z.literal("json_object") }),
    z.object({
      type: z.literal("json_schema"),
      json_schema: z.object({
        name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "json_schema.name must be 1 to 64 letters, digits, _ or -"),
        description: z.string().max(4096).optional(),
        schema: z.record(z.string(), z.unknown()).optional(),
        strict: z.boolean().nullish(),
      }),
    }),
  ],
  { error: () => "response_format.type must be text, json_object or json_schema" },
);

/** Keywords a grammar cannot hold a reply to: with `strict`, a schema that uses one is refused. */
const UNENFORCEABLE = [
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "uniqueItems",
  "patternProperties",
  "minProperties",
  "maxProperties",
  "not",
  "allOf",
  "if",
  "contains",
  "dependentRequired",
  "dependentSchemas",
];

function unenforceable(s: unknown, at: string): string | undefined {
  if (Array.isArray(s)) {
    for (const [i, x] of s.entries()) {
      const found = unenforceable(x, `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof s !== "object" || s === null) return undefined;
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties" && typeof v === "object" && v !== null) {
      // Under `properties` the keys are names, not keywords.
      for (const [name, sub] of Object.entries(v)) {
        const found = unenforceable(sub, `${at}.properties.${name}`);
        if (found) return found;
      }
      continue;
    }
    if (UNENFORCEABLE.includes(k)) return `${at}.${k}`;
    const found = unenforceable(v, `${at}.${k}`);
    if (found) return found;
  }
  return undefined;
}

/**
 * The request's response_format, checked before anything is stored: a schema the grammar or the
 * validator cannot use, a strict one the grammar cannot hold, or a format beside tools the model
 * may call is a 400 naming the field.
 */
export function requestResponseFormat(
  raw: z.infer<typeof ResponseFormatSchema> | null | undefined,
  toolsOffered: boolean,
  field = "response_format",
): ResponseFormat | null {
  if (!raw || raw.type === "text") return null;
  if (toolsOffered) {
    throw invalidRequest(
      `${field} ${raw.type} cannot be combined with tools the model may call on this server: send tool_choice "none", or no tools`,
      field,
      "unsupported_parameter",
    );
  }
  if (raw.type === "json_object") return { type: "json_object" };
  const { name, schema = { type: "object" }, strict } = raw.json_schema;
  const at = `${field}.json_schema.schema`;
  try {
    toGrammarSchema(schema);
  } catch (err) {
    if (err instanceof ToolSchemaError)
      throw invalidRequest(`${at}: ${err.message.replace(/^parameters/, "schema")}`, at, "invalid_response_format");
    throw err;
  }
  const validator = validatorFor(schema);
  if (typeof validator === "string") throw invalidRequest(`${at}: ${validator}`, at, "invalid_response_format");
  const loose = strict ? unenforceable(schema, "schema") : undefined;
  if (loose) {
    throw invalidRequest(
      `${at}: "${loose.split(".").pop()}" (at ${loose}) cannot be enforced while generating; send strict: false to have it checked afterwards instead`,
      at,
      "invalid_response_format",
    );
  }
  return { type: "json_schema", name, schema, strict: strict ?? false };
}

/** What is wrong with a finished reply in `format`, as readable lines; empty when it is valid. */
export function replyProblems(format: ResponseFormat, text: string, finishReason: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return [
      finishReason === "length"
        ? "the reply was cut off by max_tokens before its JSON ended"
        : `the reply is not JSON: ${(err as Error).message}`,
    ];
  }
  if (format.type === "json_object")
    return typeof value === "object" && value !== null && !Array.isArray(value) ? [] : ["the reply is not a JSON object"];
  const validate = validatorFor(format.schema);
  // Checked when the request came (requestResponseFormat).
  if (typeof validate === "string") return [validate];
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "reply"} ${e.message ?? "is invalid"}`);
}

/** A line for the prompt, so that a model writes what the grammar will hold it to anyway. */
export function formatInstruction(format: ResponseFormat): string {
  return format.type === "json_object"
    ? "Reply with a JSON object only."
    : `Reply with JSON only, matching this JSON Schema (${format.name}): ${JSON.stringify(format.schema)}`;
}

// Client tools' JSON schemas, turned into what node-llama-cpp's grammar understands (a subset
// of JSON Schema). What the grammar cannot express is left out here and checked after
// generation against the client's own schema (numeric bounds, patterns, ...).
import type { GbnfJsonSchema } from "node-llama-cpp";

/** Strings without a maxLength get this one in the grammar, so that every call ends. */
export const DEFAULT_MAX_STRING = 1024;

type Json = Record<string, unknown>;
const isObject = (x: unknown): x is Json => typeof x === "object" && x !== null && !Array.isArray(x);
const SCALARS = new Set(["string", "number", "integer", "boolean", "null"]);
const scalar = (x: unknown): x is string | number | boolean | null => x === null || ["string", "number", "boolean"].includes(typeof x);

export class ToolSchemaError extends Error {
  override name = "ToolSchemaError";
}

/** The grammar schema for a tool's `parameters` (an object schema; absent = no arguments). */
export function toGrammarSchema(parameters: unknown, maxString = DEFAULT_MAX_STRING): GbnfJsonSchema {
  if (parameters === undefined || parameters === null) return { type: "object", properties: {}, additionalProperties: false };
  return convert(parameters, "parameters", maxString, 0);
}

function convert(s: unknown, at: string, maxString: number, depth: number): GbnfJsonSchema {
  if (depth > 12) throw new ToolSchemaError(`${at}: nested too deeply`);
  if (s === true || (isObject(s) && Object.keys(s).length === 0)) return { type: ["string", "number", "boolean", "null"] };
  if (!isObject(s)) throw new ToolSchemaError(`${at}: a schema must be an object`);
  const description = typeof s.description === "string" ? { description: s.description } : {};
  if ("const" in s) {
    if (!scalar(s.const)) throw new ToolSchemaError(`${at}.const: only strings, numbers, booleans and null`);
    return { const: s.const, ...description };
  }
  if (Array.isArray(s.enum)) {
    if (!s.enum.every(scalar) || s.enum.length === 0) throw new ToolSchemaError(`${at}.enum: only strings, numbers, booleans and null`);
    return { enum: s.enum as (string | number | boolean | null)[], ...description };
  }
  const alternatives = (Array.isArray(s.oneOf) && s.oneOf) || (Array.isArray(s.anyOf) && s.anyOf);
  if (alternatives) return { oneOf: alternatives.map((a, i) => convert(a, `${at}.oneOf[${i}]`, maxString, depth + 1)), ...description };
  const type = s.type;
  if (Array.isArray(type)) {
    if (!type.every((t) => typeof t === "string" && SCALARS.has(t))) {
      return { oneOf: type.map((t, i) => convert({ ...s, type: t }, `${at}.type[${i}]`, maxString, depth + 1)), ...description };
    }
    return { type: type as ("string" | "number" | "integer" | "boolean" | "null")[], ...description };
  }
  switch (type) {
    case "string": {
      const maxLength = typeof s.maxLength === "number" ? Math.min(s.maxLength, maxString) : maxString;
      const minLength = typeof s.minLength === "number" ? Math.min(s.minLength, maxLength) : undefined;
      return { type: "string", maxLength, ...(minLength === undefined ? {} : { minLength }), ...description };
    }
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { type, ...description };
    case "array": {
      const items = s.items === undefined ? undefined : convert(s.items, `${at}.items`, maxString, depth + 1);
      return {
        type: "array",
        ...(items ? { items } : {}),
        ...(typeof s.minItems === "number" ? { minItems: s.minItems } : {}),
        ...(typeof s.maxItems === "number" ? { maxItems: s.maxItems } : {}),
        ...description,
      };
    }
    case "object":
    case undefined: {
      // No type and nothing that implies one ({"description": ...}, as agents' tools have):
      // any value, as JSON Schema says; the grammar offers a scalar, as for an empty schema.
      if (type === undefined && !isObject(s.properties)) {
        if ("$ref" in s) throw new ToolSchemaError(`${at}: no type ($ref is not followed)`);
        if (s.items !== undefined) return convert({ ...s, type: "array" }, at, maxString, depth);
        return { type: ["string", "number", "boolean", "null"], ...description };
      }
      const props = isObject(s.properties) ? s.properties : {};
      const properties = Object.fromEntries(
        Object.entries(props).map(([k, v]) => [k, convert(v, `${at}.properties.${k}`, maxString, depth + 1)]),
      );
      const required = Array.isArray(s.required)
        ? s.required.filter((r): r is string => typeof r === "string" && r in properties)
        : undefined;
      return {
        type: "object",
        properties,
        // Free-form extra keys would let a random model write forever: only declared ones.
        additionalProperties: false,
        ...(required ? { required } : {}),
        ...description,
      } as GbnfJsonSchema;
    }
    default:
      throw new ToolSchemaError(`${at}.type: ${JSON.stringify(type)} is not a JSON Schema type`);
  }
}

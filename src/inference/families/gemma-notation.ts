// Gemma 4's own notation for tools, as its chat template writes it: declarations, calls and
// results in a JSON-like form whose strings are delimited by the `<|"|>` token and whose keys
// are bare (`call:get_weather{city:<|"|>Paris<|"|>}`). node-llama-cpp's Gemma 4 wrapper renders
// and parses JSON in their place, which the model was not trained on: the engine reads calls
// with `gemmaCalls` and renders with `speakGemma` (docs/models.md).
import { type ChatModelFunctions, type ChatWrapper, LlamaText, SpecialTokensText } from "node-llama-cpp";
import type { TextCall, TextCallSyntax } from "./call-syntax.js";

const Q = '<|"|>';

/** A value as the template's format_argument writes it (keys sorted, bare in calls and results). */
export function gemmaValue(value: unknown, escapeKeys = false): string {
  if (typeof value === "string") return `${Q}${value}${Q}`;
  if (Array.isArray(value)) return `[${value.map((v) => gemmaValue(v, escapeKeys)).join(",")}]`;
  if (value !== null && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${escapeKeys ? `${Q}${k}${Q}` : k}:${gemmaValue((value as Record<string, unknown>)[k], escapeKeys)}`)
      .join(",")}}`;
  return String(value);
}

type Schema = {
  type?: unknown;
  description?: unknown;
  enum?: unknown;
  items?: unknown;
  properties?: unknown;
  required?: unknown;
  nullable?: unknown;
};

const upper = (type: unknown) => (Array.isArray(type) ? type.map((t) => String(t).toUpperCase()) : String(type ?? "").toUpperCase());

/** The template's format_parameters: each property's description, enum, items, nullable, properties, required, type. */
function properties(props: Record<string, Schema>): string {
  return Object.keys(props)
    .sort()
    .map((key) => {
      const p = props[key] ?? {};
      const parts: string[] = [];
      if (p.description) parts.push(`description:${Q}${String(p.description)}${Q}`);
      if (upper(p.type) === "STRING" && Array.isArray(p.enum)) parts.push(`enum:${gemmaValue(p.enum, true)}`);
      if (upper(p.type) === "ARRAY" && p.items && typeof p.items === "object") {
        const items = p.items as Schema;
        const inner: string[] = [];
        if (items.properties) inner.push(`properties:{${properties(items.properties as Record<string, Schema>)}}`);
        if (Array.isArray(items.required)) inner.push(`required:[${items.required.map((r) => `${Q}${String(r)}${Q}`).join(",")}]`);
        if (items.type !== undefined) inner.push(`type:${gemmaValue(upper(items.type), true)}`);
        parts.push(`items:{${inner.join(",")}}`);
      }
      if (p.nullable) parts.push("nullable:true");
      if (upper(p.type) === "OBJECT" && p.properties && typeof p.properties === "object") {
        parts.push(`properties:{${properties(p.properties as Record<string, Schema>)}}`);
        if (Array.isArray(p.required) && p.required.length)
          parts.push(`required:[${p.required.map((r) => `${Q}${String(r)}${Q}`).join(",")}]`);
      }
      parts.push(`type:${Q}${String(upper(p.type))}${Q}`);
      return `${key}:{${parts.join(",")}}`;
    })
    .join(",");
}

/** One tool as the template's format_function_declaration writes it. */
export function gemmaDeclaration(name: string, description: string | undefined, params: Schema | undefined): string {
  let out = `declaration:${name}{description:${Q}${description ?? ""}${Q}`;
  if (params) {
    out += ",parameters:{";
    if (params.properties) out += `properties:{${properties(params.properties as Record<string, Schema>)}},`;
    if (Array.isArray(params.required) && params.required.length)
      out += `required:[${params.required.map((r) => `${Q}${String(r)}${Q}`).join(",")}],`;
    if (params.type) out += `type:${Q}${String(upper(params.type))}${Q}}`;
  }
  return `${out}}`;
}

/** Reads one value of the notation at `at`: [value, where it ends], or undefined where it is not one. */
function read(text: string, at: number): [unknown, number] | undefined {
  if (text.startsWith(Q, at)) {
    const end = text.indexOf(Q, at + Q.length);
    return end < 0 ? undefined : [text.slice(at + Q.length, end), end + Q.length];
  }
  const open = text[at];
  if (open === "{" || open === "[") {
    const close = open === "{" ? "}" : "]";
    const out: unknown[] = [];
    const obj: Record<string, unknown> = {};
    let i = at + 1;
    if (text[i] === close) return [open === "{" ? obj : out, i + 1];
    for (;;) {
      if (open === "{") {
        let key: string;
        if (text.startsWith(Q, i)) {
          const end = text.indexOf(Q, i + Q.length);
          if (end < 0) return undefined;
          key = text.slice(i + Q.length, end);
          i = end + Q.length;
        } else {
          const colon = text.indexOf(":", i);
          if (colon < 0) return undefined;
          key = text.slice(i, colon).trim();
          i = colon;
        }
        if (text[i] !== ":") return undefined;
        const v = read(text, i + 1);
        if (!v) return undefined;
        obj[key] = v[0];
        i = v[1];
      } else {
        const v = read(text, i);
        if (!v) return undefined;
        out.push(v[0]);
        i = v[1];
      }
      if (text[i] === ",") i++;
      else if (text[i] === close) return [open === "{" ? obj : out, i + 1];
      else return undefined;
    }
  }
  const m = /^[^,}\]]*/.exec(text.slice(at))![0];
  const word = m.trim();
  if (!word) return undefined;
  const literal = word === "true" ? true : word === "false" ? false : word === "null" ? null : Number(word);
  return [typeof literal === "number" && Number.isNaN(literal) ? word : literal, at + m.length];
}

const GEMMA_CALL = /^\s*<\|tool_call>call:([^{\s]+)(?=\{)/;

/** Gemma 4's calls: `<|tool_call>call:name{key:value,…}<tool_call|>`, one or more. */
export const gemmaCalls: TextCallSyntax = {
  opens: "<|tool_call>",
  parse(text) {
    const calls: TextCall[] = [];
    let rest = text;
    for (let m = GEMMA_CALL.exec(rest); m; m = GEMMA_CALL.exec(rest)) {
      const args = read(rest, m[0].length);
      if (!args || typeof args[0] !== "object" || Array.isArray(args[0]) || !rest.startsWith("<tool_call|>", args[1])) return undefined;
      calls.push({ name: m[1]!, arguments: JSON.stringify(args[0]) });
      rest = rest.slice(args[1] + "<tool_call|>".length);
    }
    return calls.length && !rest.trim() ? calls : undefined;
  },
};

/** The notation's text with each `<|"|>` as the token it is (a text would spell it out). */
const tokens = (text: string): LlamaText =>
  LlamaText(text.split(Q).flatMap((part, i) => (i === 0 ? [part] : [new SpecialTokensText(Q), part])));

/** Has node-llama-cpp's Gemma 4 wrapper write declarations, past calls and their results in the template's notation. */
export function speakGemma(wrapper: ChatWrapper): void {
  const special = (text: string) => new SpecialTokensText(text);
  Object.assign(wrapper, {
    generateAvailableFunctionsSystemText(functions: ChatModelFunctions): LlamaText {
      return LlamaText(
        Object.entries(functions).map(([name, f]) =>
          LlamaText([
            special("<|tool>"),
            tokens(gemmaDeclaration(name, f.description, f.params as Schema | undefined)),
            special("<tool|>"),
          ]),
        ),
      );
    },
    generateFunctionCall(name: string, params: unknown): LlamaText {
      const args = params && typeof params === "object" && !Array.isArray(params) ? gemmaValue(params) : "{}";
      return LlamaText([special("<|tool_call>"), tokens(`call:${name}${args}`), special("<tool_call|>")]);
    },
    generateFunctionCallResult(name: string, _params: unknown, result: unknown): LlamaText {
      const value =
        result && typeof result === "object" && !Array.isArray(result) ? gemmaValue(result) : `{value:${gemmaValue(result ?? "")}}`;
      return LlamaText([special("<|tool_response>"), tokens(`response:${name}${value}`), special("<tool_response|>")]);
    },
  });
}

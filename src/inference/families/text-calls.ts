// Tool calls parsed from the reply's text, for syntaxes node-llama-cpp's function calling cannot
// hold: it grammar-constrains a call as a name and one JSON value after a fixed opening, where
// Qwen3-Coder writes one `<parameter=name>` block per argument, its value as plain text, and
// Llama 3.1 may answer with the JSON form its own template asks for, `{"name": …, "parameters":
// …}`, beside the `<function=…>` form node-llama-cpp's wrapper asks for (docs/models.md, "Tool
// calls"). The engine offers the tools through the family's prompt, lets the model write, holds
// the reply back from a call's opening, and reads the calls off the text once it ends
// (llama-engine.ts).
import {
  Gemma4ChatWrapper,
  JinjaTemplateChatWrapper,
  Llama3_1ChatWrapper,
  LlamaText,
  type ChatWrapper,
  type ChatWrapperSettings,
} from "node-llama-cpp";
import type { TextCall, TextCallSyntax } from "./call-syntax.js";
import { gemmaCalls, speakGemma } from "./gemma-notation.js";

const QWEN_XML_CALL = /^\s*<tool_call>\s*<function=([^>\n]+)>\n?([\s\S]*?)<\/function>\s*<\/tool_call>/;
const QWEN_XML_PARAMETER = /<parameter=([^>\n]+)>\n?([\s\S]*?)\n?<\/parameter>/g;

/** A parameter's text as the value its schema asks for: a string stays one; anything else is read as JSON where it is JSON. */
function valueOf(text: string, schema: unknown): unknown {
  const type = (schema as { type?: unknown } | undefined)?.type;
  if (type === "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Qwen3-Coder's calls: `<tool_call>\n<function=name>\n<parameter=key>\nvalue\n</parameter>\n</function>\n</tool_call>`, one or more. */
export const qwenXmlCalls: TextCallSyntax = {
  opens: "<tool_call>",
  parse(text, tools) {
    const calls: TextCall[] = [];
    let rest = text;
    for (let m = QWEN_XML_CALL.exec(rest); m; m = QWEN_XML_CALL.exec(rest)) {
      const name = m[1]!.trim();
      const properties = (tools.find((t) => t.name === name)?.parameters as { properties?: Record<string, unknown> } | undefined)
        ?.properties;
      const args: Record<string, unknown> = {};
      for (const p of m[2]!.matchAll(QWEN_XML_PARAMETER)) args[p[1]!.trim()] = valueOf(p[2]!, properties?.[p[1]!.trim()]);
      calls.push({ name, arguments: JSON.stringify(args) });
      rest = rest.slice(m[0].length);
    }
    return calls.length && !rest.trim() ? calls : undefined;
  },
};

/**
 * The top-level JSON objects `text` is made of, one after another (whitespace or `;` between),
 * or undefined where it holds anything else.
 */
function jsonObjects(text: string): unknown[] | undefined {
  const out: unknown[] = [];
  let depth = 0;
  let from = -1;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      if (depth === 0) return undefined;
      quoted = true;
    } else if (c === "{") {
      if (depth++ === 0) from = i;
    } else if (c === "}") {
      if (--depth < 0) return undefined;
      if (depth === 0) {
        try {
          out.push(JSON.parse(text.slice(from, i + 1)));
        } catch {
          return undefined;
        }
      }
    } else if (depth === 0 && !/[\s;]/.test(c)) return undefined;
  }
  return depth === 0 && out.length ? out : undefined;
}

/** Llama 3.1's JSON form, as its own template asks for it: `{"name": …, "parameters": {…}}`, after `<|python_tag|>` where the model writes one. */
export const llamaJsonCalls: TextCallSyntax = {
  opens: "{",
  atStart: true,
  lead: "<|python_tag|>",
  parse(text) {
    const objects = jsonObjects(text.replace(/^\s*<\|python_tag\|>/, ""));
    const calls = objects?.map((o) => {
      const { name, parameters, arguments: args } = (o ?? {}) as { name?: unknown; parameters?: unknown; arguments?: unknown };
      const params = parameters ?? args ?? {};
      return typeof name === "string" && name && typeof params === "object" && params !== null && !Array.isArray(params)
        ? { name, arguments: JSON.stringify(params) }
        : undefined;
    });
    return calls?.every((c) => c !== undefined) ? (calls as TextCall[]) : undefined;
  },
};

/** A call opening no text can hold: the wrapper's own function calling never engages. */
const NEVER = LlamaText("\u0000psyche: calls are read from the text\u0000");

/**
 * The family's calls read from the text, where node-llama-cpp's function calling would hold the
 * model to another syntax: the syntax, and the wrapper to render prompts with while it is read
 * (the family's own, its function calling switched off). Undefined for every other family.
 */
export function textCallsFor(wrapper: ChatWrapper): { syntax: TextCallSyntax; wrapper: ChatWrapper } | undefined {
  // Llama 3.1 keeps its wrapper's own `<function=…>` calls; the JSON form is read beside them.
  if (wrapper instanceof Llama3_1ChatWrapper) return { syntax: llamaJsonCalls, wrapper };
  if (wrapper instanceof Gemma4ChatWrapper) {
    speakGemma(wrapper);
    return { syntax: gemmaCalls, wrapper: reading(wrapper) };
  }
  if (!(wrapper instanceof JinjaTemplateChatWrapper) || !/<parameter=/.test(wrapper.template) || !/<function=/.test(wrapper.template))
    return undefined;
  renderCallsAsTheTemplateDoes(wrapper);
  return { syntax: qwenXmlCalls, wrapper: reading(wrapper) };
}

/** The wrapper as it is, its own function calling switched off: the calls are read from the text. */
function reading<W extends ChatWrapper>(wrapper: W): W {
  const reading = Object.assign(Object.create(Object.getPrototypeOf(wrapper) as object) as W, wrapper);
  const settings: ChatWrapperSettings = {
    ...wrapper.settings,
    functions: { ...wrapper.settings.functions, call: { ...wrapper.settings.functions.call, prefix: NEVER } },
  };
  Object.defineProperty(reading, "settings", { value: settings });
  return reading;
}

/**
 * node-llama-cpp's Jinja wrapper passes a past call's arguments to the template wrapped in one
 * `params` key, to match the single JSON value its function calling writes; the template then
 * renders `<parameter=params>{…}`. The arguments as they are render each as its own parameter,
 * as Qwen3-Coder writes them.
 */
function renderCallsAsTheTemplateDoes(wrapper: JinjaTemplateChatWrapper): void {
  const internals = wrapper as unknown as { _wrapFunctionParamsInsideMapKey?: string };
  internals._wrapFunctionParamsInsideMapKey = undefined;
}

/**
 * The reply's text as it streams, held back from the first call's opening (or what may be the
 * start of one at its end): `relay` passes on what is surely text; `held` is the rest.
 */
export class CallHold {
  private all = "";
  private sent = 0;
  private opened = -1;
  /** For a syntax held only at the reply's start: whether the start has been seen not to open one. */
  private plain = false;

  constructor(private readonly syntax: Pick<TextCallSyntax, "opens" | "atStart" | "lead">) {}

  /** The part of `all + piece` now known to be text, not yet passed on. */
  relay(piece: string): string {
    this.all += piece;
    const { opens, atStart } = this.syntax;
    if (this.opened < 0 && !this.plain) {
      if (atStart) {
        const start = this.all.trimStart();
        const lead = this.syntax.lead ?? "";
        const body = lead && start.startsWith(lead) ? start.slice(lead.length).trimStart() : start;
        if (body.startsWith(opens)) this.opened = this.all.length - start.length;
        else if (body && !opens.startsWith(body) && !(lead.startsWith(body) && body === start)) this.plain = true;
      } else {
        const at = this.all.indexOf(opens, Math.max(0, this.sent - opens.length));
        if (at >= 0) this.opened = at;
      }
    }
    const upTo =
      this.opened >= 0
        ? this.opened
        : this.plain
          ? this.all.length
          : atStart
            ? this.sent
            : this.all.length - partialOpening(this.all, opens);
    if (upTo <= this.sent) return "";
    const out = this.all.slice(this.sent, upTo);
    this.sent = upTo;
    return out;
  }

  /** What was passed on as text. */
  get text(): string {
    return this.all.slice(0, this.sent);
  }

  /** What is held back. */
  get held(): string {
    return this.all.slice(this.sent);
  }
}

/** How many of `text`'s last characters begin `opening`. */
function partialOpening(text: string, opening: string): number {
  for (let n = Math.min(opening.length - 1, text.length); n > 0; n--) if (opening.startsWith(text.slice(-n))) return n;
  return 0;
}

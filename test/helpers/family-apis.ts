/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw responses */
// Every family on every API (test/engine/family-apis-*.test.ts, a few families each, so that a
// file stays within the runner's time on a loaded machine): chat completions, Anthropic Messages and Responses, streamed and
// not. The random model of each family is held to a fixed text in the family's own syntax
// (test/helpers/family-engine.ts), so each family's wrapper or parser meets what a real model
// writes: a thought then an answer, a thought then a call (two where the family writes several),
// and the call's result answered. No thinking tag, channel marker or call syntax reaches the
// text; the thought comes back as the API's reasoning; the calls as its tool calls.
import type { Test } from "tap";
import { familyEngine } from "./family-engine.js";
import { inProcessPsyche, type InProcessPsyche } from "./in-process.js";
import { sseEvents } from "./sse-events.js";
import { until } from "./until.js";
import type { GenerateRequest } from "../../src/inference/engine.js";
import type { ToolSpec } from "../../src/tools/types.js";

const THOUGHT = "I should answer plainly.";
const ANSWER = "Hello there.";
const AFTER = "It is sunny.";
const WEATHER = ["get_weather", { city: "Paris" }] as const;
const NOTES = ["read_file", { path: "notes.txt" }] as const;

interface Family {
  /** How the family writes a thought before `rest`, where it thinks. */
  think?: (rest: string) => string;
  /** Its calls, as it writes them (the thought is added by `think`). */
  calls: (calls: readonly (readonly [string, Record<string, string>])[]) => string;
  /** More than one call per reply. */
  parallel: boolean;
  /** An answer after a tool's result, where the family opens it otherwise than a first answer. */
  after?: (text: string) => string;
}

const json = (args: object) => JSON.stringify(args);
const FAMILIES: Record<string, Family> = {
  qwen3: {
    think: (rest) => `<think>\n${THOUGHT}\n</think>\n\n${rest}`,
    calls: (cs) => cs.map(([n, a]) => `<tool_call>\n{"name": "${n}", "arguments": ${json(a)}}\n</tool_call>`).join("\n"),
    parallel: true,
  },
  "qwen3-coder": {
    calls: (cs) =>
      cs
        .map(
          ([n, a]) =>
            `<tool_call>\n<function=${n}>\n${Object.entries(a)
              .map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`)
              .join("")}</function>\n</tool_call>`,
        )
        .join("\n"),
    parallel: true,
  },
  "deepseek-r1": {
    think: (rest) => `<think>\n${THOUGHT}\n</think>\n\n${rest}`,
    calls: (cs) => cs.map(([n, a]) => `<function=${n}>${json(a)}</function>`).join("\n"),
    parallel: true,
  },
  // DeepSeek V3.1 opens the thought itself (node-llama-cpp writes `<think>` where thinking is on), and closes it.
  "deepseek-v3.1": {
    think: (rest) => `<think>${THOUGHT}</think>${rest}`,
    calls: (cs) =>
      `<｜tool▁calls▁begin｜>${cs.map(([n, a]) => `<｜tool▁call▁begin｜>${n}<｜tool▁sep｜>${json(a)}<｜tool▁call▁end｜>`).join("")}<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`,
    parallel: true,
  },
  "llama3.1": { calls: ([c]) => `<function=${c![0]}>${json(c![1])}</function>`, parallel: false },
  gemma4: {
    think: (rest) => `<|channel>thought\n${THOUGHT}<channel|>${rest}`,
    calls: (cs) =>
      cs
        .map(
          ([n, a]) =>
            `<|tool_call>call:${n}{${Object.entries(a)
              .map(([k, v]) => `${k}:<|"|>${v}<|"|>`)
              .join(",")}}<tool_call|>`,
        )
        .join(""),
    parallel: true,
  },
  "gpt-oss": {
    think: (rest) => `<|channel|>analysis<|message|>${THOUGHT}<|end|><|start|>assistant${rest}`,
    calls: ([c]) => `<|channel|>commentary to=functions.${c![0]} <|constrain|>json<|message|>${json(c![1])}<|call|>`,
    parallel: false,
    after: (text) => `<|channel|>final<|message|>${text}<|return|>`,
  },
  mistral: { calls: (cs) => `${cs.map(([n, a]) => `[TOOL_CALLS]${n}[ARGS]${json(a)}`).join("")}</s>`, parallel: true },
};

/** The tools the family tests offer: the weather in a city, and a file to read. */
export const tools: ToolSpec[] = [
  {
    name: "get_weather",
    description: "The weather in a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
  {
    name: "read_file",
    description: "Read a file in the workspace",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

/** What each family's model writes: an answer to a result, calls when tools are offered, else an answer. */
function writer(f: Family) {
  const thinking = f.think ?? ((rest: string) => rest);
  const answer = (text: string) => (f.after ? f.after(text) : text);
  return (request: GenerateRequest): string => {
    if (request.messages.at(-1)?.role === "tool") return f.after ? thinking(f.after(AFTER)) : thinking(AFTER);
    if (request.tools?.length) return thinking(f.calls(f.parallel ? [WEATHER, NOTES] : [WEATHER]));
    return thinking(f.after ? answer(ANSWER) : ANSWER);
  };
}

interface Reply {
  text: string;
  thought: string;
  calls: { id: string; name: string; args: unknown }[];
}

type Api = "chat" | "messages" | "responses";

/** One request on `api`, with tools or not, after `history` (a call and its result) or not; the reply as text, thought and calls. */
async function ask(psyche: InProcessPsyche, api: Api, stream: boolean, withTools: boolean, answered?: Reply): Promise<Reply> {
  const user = "Weather in Paris, and my notes?";
  const results = answered?.calls ?? [];
  if (api === "chat") {
    const messages: any[] = [{ role: "user", content: user }];
    if (answered)
      messages.push(
        {
          role: "assistant",
          content: null,
          tool_calls: results.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: json(c.args as object) } })),
        },
        ...results.map((c) => ({ role: "tool", tool_call_id: c.id, content: "sunny" })),
      );
    const body = { model: "any", stream, messages, ...(withTools ? { tools: tools.map((f) => ({ type: "function", function: f })) } : {}) };
    const res = await psyche.request("/v1/chat/completions", { body });
    if (!stream) {
      const m = ((await res.json()) as any).choices[0].message;
      return {
        text: m.content ?? "",
        thought: m.reasoning_content ?? "",
        calls: (m.tool_calls ?? []).map((c: any) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) })),
      };
    }
    const deltas = (await sseEvents(res)).filter((e) => e.data !== "[DONE]").flatMap((e) => e.data.choices.map((c: any) => c.delta));
    const calls: any[] = [];
    for (const d of deltas)
      for (const c of d.tool_calls ?? []) {
        const call = (calls[c.index] ??= { id: c.id, name: "", args: "" });
        call.name += c.function?.name ?? "";
        call.args += c.function?.arguments ?? "";
      }
    return {
      text: deltas.map((d) => d.content ?? "").join(""),
      thought: deltas.map((d) => d.reasoning_content ?? "").join(""),
      calls: calls.map((c) => ({ ...c, args: JSON.parse(c.args) })),
    };
  }
  if (api === "messages") {
    const messages: any[] = [{ role: "user", content: user }];
    if (answered)
      messages.push(
        { role: "assistant", content: results.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.args })) },
        { role: "user", content: results.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: "sunny" })) },
      );
    const body = {
      model: "any",
      max_tokens: 300,
      stream,
      messages,
      ...(withTools ? { tools: tools.map((f) => ({ name: f.name, description: f.description, input_schema: f.parameters })) } : {}),
    };
    const res = await psyche.request("/v1/messages", { body });
    let blocks: any[];
    if (!stream) blocks = ((await res.json()) as any).content;
    else {
      blocks = [];
      for (const e of await sseEvents(res)) {
        if (e.event === "content_block_start") blocks[e.data.index] = { ...e.data.content_block, partial: "" };
        if (e.event === "content_block_delta") {
          const b = blocks[e.data.index];
          const d = e.data.delta;
          if (d.type === "text_delta") b.text += d.text;
          if (d.type === "thinking_delta") b.thinking += d.thinking;
          if (d.type === "input_json_delta") b.partial += d.partial_json;
        }
      }
      for (const b of blocks) if (b.type === "tool_use" && b.partial) b.input = JSON.parse(b.partial);
    }
    return {
      text: blocks.map((b) => (b.type === "text" ? b.text : "")).join(""),
      thought: blocks.map((b) => (b.type === "thinking" ? b.thinking : "")).join(""),
      calls: blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, args: b.input })),
    };
  }
  const input: any[] = [{ role: "user", content: user }];
  if (answered)
    input.push(
      ...results.map((c) => ({ type: "function_call", call_id: c.id, name: c.name, arguments: json(c.args as object) })),
      ...results.map((c) => ({ type: "function_call_output", call_id: c.id, output: "sunny" })),
    );
  const body = { model: "any", stream, input, ...(withTools ? { tools: tools.map((f) => ({ type: "function", ...f })) } : {}) };
  const res = await psyche.request("/v1/responses", { body });
  let output: any[];
  let streamedText: string | undefined;
  if (!stream) output = ((await res.json()) as any).output;
  else {
    const events = await sseEvents(res);
    output = events.find((e) => e.event === "response.completed")!.data.response.output;
    streamedText = events
      .filter((e) => e.event === "response.output_text.delta")
      .map((e) => e.data.delta)
      .join("");
  }
  const text = output
    .filter((o) => o.type === "message")
    .flatMap((o) => o.content.map((c: any) => c.text ?? ""))
    .join("");
  if (streamedText !== undefined && streamedText !== text)
    throw new Error(`streamed ${JSON.stringify(streamedText)}, ended ${JSON.stringify(text)}`);
  return {
    text,
    thought: output
      .filter((o) => o.type === "reasoning")
      .flatMap((o) => (o.content ?? []).map((c: any) => c.text ?? ""))
      .join(""),
    calls: output.filter((o) => o.type === "function_call").map((o) => ({ id: o.call_id, name: o.name, args: JSON.parse(o.arguments) })),
  };
}

/** Nothing of any family's syntax. */
const MARKERS =
  /<\/?think>|<\|channel|channel\|>|<\|message\|>|tool_call|<function=|<parameter=|\[TOOL_CALLS\]|\[ARGS\]|<\|"\|>|"arguments"/;

/** The family's test: every API, streamed and not, each case; then its memories. */
export function familyOnEveryApi(t: Test, name: keyof typeof FAMILIES & string): void {
  const family = FAMILIES[name]!;
  t.test(name, async (t) => {
    const engine = await familyEngine(name, writer(family));
    const psyche = await inProcessPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine });
    const thought = family.think ? THOUGHT : "";
    const check = (t: Test, r: Reply, text: string, what: string) => {
      t.equal(r.text.trim(), text, `${what}: the text`);
      t.equal(r.thought.trim(), thought, `${what}: the thought apart`);
      t.notMatch(r.text + r.thought, MARKERS, `${what}: no syntax of the family's in either`);
    };
    for (const api of ["chat", "messages", "responses"] as const)
      for (const stream of [false, true]) {
        const how = `${api}${stream ? ", streamed" : ""}`;
        check(t, await ask(psyche, api, stream, false), ANSWER, `${how}, a thought then an answer`);
        const called = await ask(psyche, api, stream, true);
        check(t, called, "", `${how}, a thought then ${family.parallel ? "two calls" : "a call"}`);
        t.same(
          called.calls.map((c) => [c.name, c.args]),
          family.parallel ? [WEATHER, NOTES] : [WEATHER],
          `${how}: the calls`,
        );
        check(t, await ask(psyche, api, stream, true, called), AFTER, `${how}, the result answered`);
      }
    // What was said is remembered, what was thought is not: the turns keep it apart.
    const memories = await until("the turns' memories", async () => {
      const res = await psyche.db.pool.query<{ content: string }>("select content from memories where source_kind = 'turn'");
      return res.rows.length >= 6 ? res.rows : undefined;
    });
    t.notMatch(memories.map((m) => m.content).join("\n"), new RegExp(`${THOUGHT}|${MARKERS.source}`), "no thought or syntax in memory");
    const turns = await psyche.db.pool.query<{ n: number }>("select count(*)::int as n from turns where reasoning like $1", [
      `%${THOUGHT}%`,
    ]);
    t.equal(turns.rows[0]!.n > 0, Boolean(family.think), "the turns keep the thought apart");
  });
}

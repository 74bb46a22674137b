/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw responses */
// Calls a model writes on its own (tool_choice "auto") in its family's syntax, through the real
// engine and the family's own chat wrapper: the random model is held to a fixed text, Qwen3's
// `<think>` and `<tool_call>` blocks as the real model writes them (test/helpers/family-engine.ts),
// so node-llama-cpp's parser meets what a real model writes. The thought stays a thought, each
// call comes back as a call on every API, streamed and not, and a tool's result is read back
// in the family's own format. Which families' syntaxes are parsed so: docs/models.md.
import t, { type Test } from "tap";
import { getLlama } from "node-llama-cpp";
import { familyEngine, familyModel } from "../helpers/family-engine.js";
import { modelOf } from "../helpers/model-of.js";
import { inProcessPsyche } from "../helpers/in-process.js";
import { sseEvents } from "../helpers/sse-events.js";
import type { GenerateRequest } from "../../src/inference/engine.js";
import type { LlamaEngine } from "../../src/inference/llama-engine.js";
import type { ToolSpec } from "../../src/tools/types.js";
import { tools } from "../helpers/family-apis.js";

const THOUGHT = "The user wants the weather and the notes.";
const call = (name: string, args: object) => `<tool_call>\n{"name": "${name}", "arguments": ${JSON.stringify(args)}}\n</tool_call>`;
const TWO_CALLS = `<think>\n${THOUGHT}\n</think>\n\n${call("get_weather", { city: "Paris" })}\n${call("read_file", { path: "notes.txt" })}`;
const ANSWER = "It is sunny in Paris.";

/** What the model writes: an answer once it has a tool's result, a plain reply when asked to chat, otherwise a thought and two calls. */
function written(request: GenerateRequest): string {
  const last = request.messages.at(-1);
  if (last?.role === "tool") return `<think>\nI have the results.\n</think>\n\n${ANSWER}`;
  if (typeof last?.content === "string" && last.content.includes("chat")) return "<think>\nJust a chat.\n</think>\n\nHello!";
  return TWO_CALLS;
}

const engine = await familyEngine("qwen3", written);

/** The prompt `model` renders for `request`, as text (special tokens spelled out), and the family's vocabulary. */
async function rendered(t: Test, model: LlamaEngine, family: string, request: GenerateRequest) {
  const { tokens } = model.render(request);
  const vocabulary = await (
    await getLlama({ gpu: false, build: "never" })
  ).loadModel({ modelPath: await familyModel(family), vocabOnly: true });
  t.teardown(() => vocabulary.dispose());
  return { prompt: vocabulary.detokenize(tokens, true), vocabulary };
}
const psyche = await inProcessPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine });
const openaiTools = tools.map((tool) => ({ type: "function", function: tool }));
const ask = (content: string) => [{ role: "user", content }];

t.test("the engine: a thought, then two calls in Qwen's syntax, parsed as calls with tool_choice auto", async (t) => {
  const streamed: string[] = [];
  const r = await modelOf(engine).generate({
    messages: [{ role: "user", content: "Weather in Paris, and my notes?" }],
    maxTokens: 300,
    tools,
    toolChoice: "auto",
    onText: (text) => streamed.push(text),
  });
  t.equal(r.finishReason, "tool_calls");
  t.equal(r.reasoning?.trim(), THOUGHT, "the thought before the calls stays a thought");
  t.same(
    r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [
      ["get_weather", { city: "Paris" }],
      ["read_file", { path: "notes.txt" }],
    ],
    "both calls, in order, with their arguments",
  );
  t.equal(r.text.trim(), "", "no call syntax left in the text");
  t.notMatch(streamed.join(""), /tool_call|think|"name"/, "nor in what streamed");
});

/**
 * A thought (where the family thinks) and then a call, as each family's model writes it with
 * the prompt its wrapper renders: gpt-oss on Harmony's commentary channel, DeepSeek R1 and
 * Llama 3.1 in the `<function=…>` form their wrappers' prompts ask for, Mistral with its
 * `[TOOL_CALLS]` and `[ARGS]` control tokens.
 */
const WEATHER = ["get_weather", { city: "Paris" }];
const NOTES = ["read_file", { path: "notes.txt" }];
const FAMILY_CALLS: Record<string, { written: string; thought?: string; calls?: unknown[][] }> = {
  "gpt-oss": {
    written:
      '<|channel|>analysis<|message|>I need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>',
    thought: "I need the weather.",
  },
  "deepseek-r1": {
    written: '<think>\nI need the weather.\n</think>\n\n<function=get_weather>{"city": "Paris"}</function>',
    thought: "I need the weather.",
  },
  "llama3.1": { written: '<function=get_weather>{"city": "Paris"}</function>' },
  // Thinking on, V3.1's default: node-llama-cpp opens the thought, the model closes it.
  "deepseek-v3.1 (two)": {
    thought: "I need both.",
    written:
      '<think>I need both.</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "notes.txt"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
    calls: [WEATHER, NOTES],
  },
  // The JSON form Llama 3.1's own template asks for, read off the text (src/inference/families/text-calls.ts).
  "llama3.1 (JSON)": { written: '{"name": "get_weather", "parameters": {"city": "Paris"}}' },
  "deepseek-r1 (two)": {
    written:
      '<think>\nI need both.\n</think>\n\n<function=get_weather>{"city": "Paris"}</function>\n<function=read_file>{"path": "notes.txt"}</function>',
    thought: "I need both.",
    calls: [WEATHER, NOTES],
  },
  // Several JSON objects, `;` between them, as Llama 3.2 writes them.
  "llama3.1 (JSON, two)": {
    written: '{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "read_file", "parameters": {"path": "notes.txt"}}',
    calls: [WEATHER, NOTES],
  },
  mistral: { written: '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>' },
  "mistral (two)": {
    written: '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]read_file[ARGS]{"path": "notes.txt"}</s>',
    calls: [WEATHER, NOTES],
  },
  // Gemma 4's own notation, read off the text (src/inference/families/gemma-notation.ts).
  gemma4: {
    written: '<|channel>thought\nI need the weather.<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    thought: "I need the weather.",
  },
};

for (const [name, { written: text, thought, calls = [WEATHER] }] of Object.entries(FAMILY_CALLS)) {
  t.test(`${name}: a call in the family's own syntax comes back as a call`, async (t) => {
    const familyModelEngine = await familyEngine(name.split(" ")[0]!, () => text);
    t.teardown(() => familyModelEngine.dispose());
    const streamed: string[] = [];
    const r = await modelOf(familyModelEngine).generate({
      messages: [{ role: "user", content: "Weather in Paris?" }],
      maxTokens: 200,
      tools,
      toolChoice: "auto",
      onText: (piece) => streamed.push(piece),
    });
    t.equal(r.finishReason, "tool_calls");
    t.same(
      r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
      calls,
    );
    t.equal(r.reasoning?.trim() ?? "", thought ?? "", thought ? "the thought before it stays a thought" : "no thought");
    t.equal(r.text, "", "no call syntax in the text");
    t.equal(streamed.join(""), "", "nor in what streamed");
  });
}

/** Two past calls and their results, as each family that writes several renders them back: the calls together, then the results in order. */
const TWO_RENDERED: Record<string, RegExp> = {
  "deepseek-v3.1":
    /<｜Assistant｜>(?:<think><\/think>)?<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>\{"city":\s?"Paris"\}<｜tool▁call▁end｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>\{"path":\s?"notes.txt"\}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜><｜tool▁output▁begin｜>"?sunny"?<｜tool▁output▁end｜><｜tool▁output▁begin｜>"?milk"?<｜tool▁output▁end｜>$/,
  mistral:
    /\[TOOL_CALLS\]get_weather\[ARGS\]\{"city":\s?"Paris"\}\[TOOL_CALLS\]read_file\[ARGS\]\{"path":\s?"notes.txt"\}<\/s>\[TOOL_RESULTS\]"?sunny"?\[\/TOOL_RESULTS\]\[TOOL_RESULTS\]"?milk"?\[\/TOOL_RESULTS\]$/,
  "deepseek-r1":
    /<function=get_weather>\{"city":\s?"Paris"\}<\/function>\n<function=read_file>\{"path":\s?"notes.txt"\}<\/function><｜end▁of▁sentence｜><｜tool▁output▁begin｜>"?sunny"?<｜tool▁output▁end｜>\n<｜tool▁output▁begin｜>"?milk"?<｜tool▁output▁end｜>\n$/,
};
for (const [family, expected] of Object.entries(TWO_RENDERED)) {
  t.test(`${family}: two past calls and their results rendered back in the family's order`, async (t) => {
    const model = await familyEngine(family);
    t.teardown(() => model.dispose());
    const { prompt } = await rendered(t, model, family, {
      messages: [
        { role: "user", content: "Weather in Paris, and my notes?" },
        {
          role: "assistant",
          content: "",
          toolCalls: [
            { id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' },
            { id: "c2", name: "read_file", arguments: '{"path":"notes.txt"}' },
          ],
        },
        { role: "tool", toolCallId: "c1", content: "sunny" },
        { role: "tool", toolCallId: "c2", content: "milk" },
      ],
      maxTokens: 10,
      tools,
    });
    t.match(prompt, expected);
  });
}

t.test("the engine: with tools offered, a plain reply is text, not a call", async (t) => {
  const r = await modelOf(engine).generate({
    messages: [{ role: "user", content: "just chat" }],
    maxTokens: 100,
    tools,
    toolChoice: "auto",
  });
  t.equal(r.finishReason, "stop");
  t.same(r.toolCalls, []);
  t.equal(r.text.trim(), "Hello!");
});

t.test("the engine: a tool's result is read back in Qwen's own format", async (t) => {
  const { prompt } = await rendered(t, engine, "qwen3", {
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' }] },
      { role: "tool", toolCallId: "c1", content: "sunny, 24 C" },
    ],
    maxTokens: 10,
    tools,
  });
  t.match(
    prompt,
    /<tool_call>\n\{"name": "get_weather", "arguments": \{"city":\s?"Paris"\}\}\n<\/tool_call>/,
    "the call as Qwen writes it",
  );
  t.match(
    prompt,
    /<tool_response>\n"?sunny, 24 C"?\n<\/tool_response><\|im_end\|>\n<\|im_start\|>assistant\n$/,
    "the result in Qwen's block, and the reply opened once",
  );
  t.notMatch(prompt, /<\|im_start\|>assistant\n<\|im_end\|>/, "no empty assistant turn between them");
});

t.test("chat completions: tool_calls, reasoning_content apart, no content, finish_reason tool_calls", async (t) => {
  const res = await psyche.request("/v1/chat/completions", {
    body: { model: "any", messages: ask("Weather and notes?"), tools: openaiTools },
  });
  t.equal(res.status, 200);
  const choice = ((await res.json()) as any).choices[0];
  t.equal(choice.finish_reason, "tool_calls");
  t.equal(choice.message.reasoning_content.trim(), THOUGHT);
  t.notOk(choice.message.content?.trim(), "no text beside the calls");
  t.same(
    choice.message.tool_calls.map((c: any) => [c.type, c.function.name, JSON.parse(c.function.arguments)]),
    [
      ["function", "get_weather", { city: "Paris" }],
      ["function", "read_file", { path: "notes.txt" }],
    ],
  );
  t.equal(new Set(choice.message.tool_calls.map((c: any) => c.id)).size, 2, "each call its own id");
});

t.test("chat completions, streamed: the thought, then two calls by index; then the result answered", async (t) => {
  const res = await psyche.request("/v1/chat/completions", {
    body: { model: "any", stream: true, messages: ask("Weather and notes, streamed?"), tools: openaiTools },
  });
  const chunks = (await sseEvents(res)).filter((e) => e.data !== "[DONE]").map((e) => e.data);
  const deltas = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta));
  t.equal(
    deltas
      .map((d) => d.reasoning_content ?? "")
      .join("")
      .trim(),
    THOUGHT,
  );
  t.notMatch(deltas.map((d) => d.content ?? "").join(""), /tool_call|"name"/, "no call syntax as content");
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for (const d of deltas)
    for (const c of d.tool_calls ?? []) {
      const seen = calls.get(c.index) ?? { id: "", name: "", args: "" };
      calls.set(c.index, { id: c.id ?? seen.id, name: c.function?.name ?? seen.name, args: seen.args + (c.function?.arguments ?? "") });
    }
  t.same(
    [...calls.values()].map((c) => [c.name, JSON.parse(c.args)]),
    [
      ["get_weather", { city: "Paris" }],
      ["read_file", { path: "notes.txt" }],
    ],
  );
  t.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");

  const [weather, notes] = [...calls.values()];
  const answer = await psyche.request("/v1/chat/completions", {
    body: {
      model: "any",
      tools: openaiTools,
      messages: [
        ...ask("Weather and notes, streamed?"),
        {
          role: "assistant",
          content: null,
          tool_calls: [weather, notes].map((c) => ({ id: c!.id, type: "function", function: { name: c!.name, arguments: c!.args } })),
        },
        { role: "tool", tool_call_id: weather!.id, content: "sunny, 24 C" },
        { role: "tool", tool_call_id: notes!.id, content: "buy bread" },
      ],
    },
  });
  t.equal(answer.status, 200);
  const message = ((await answer.json()) as any).choices[0].message;
  t.equal(message.content.trim(), ANSWER, "the results answered");
  t.equal(message.reasoning_content.trim(), "I have the results.");
});

t.test("Anthropic messages: a thinking block, then two tool_use blocks; streamed the same", async (t) => {
  const anthropicTools = tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }));
  const body = { model: "any", max_tokens: 300, messages: ask("Weather and notes, Claude?"), tools: anthropicTools };
  const res = await psyche.request("/v1/messages", { body });
  const reply = (await res.json()) as any;
  t.equal(reply.stop_reason, "tool_use");
  t.same(
    reply.content.map((b: any) => b.type),
    ["thinking", "tool_use", "tool_use"],
  );
  t.same(
    reply.content.slice(1).map((b: any) => [b.name, b.input]),
    [
      ["get_weather", { city: "Paris" }],
      ["read_file", { path: "notes.txt" }],
    ],
  );

  const streamed = await sseEvents(await psyche.request("/v1/messages", { body: { ...body, stream: true } }));
  const starts = streamed.filter((e) => e.event === "content_block_start").map((e) => e.data.content_block);
  t.same(
    starts.map((b: any) => [b.type, b.name]),
    [
      ["thinking", undefined],
      ["tool_use", "get_weather"],
      ["tool_use", "read_file"],
    ],
  );
  const inputs = streamed
    .filter((e) => e.event === "content_block_delta" && e.data.delta.type === "input_json_delta")
    .reduce((by: Record<number, string>, e) => ({ ...by, [e.data.index]: (by[e.data.index] ?? "") + e.data.delta.partial_json }), {});
  t.same(
    Object.values(inputs).map((s) => JSON.parse(s)),
    [{ city: "Paris" }, { path: "notes.txt" }],
  );
});

t.test("Responses: a reasoning item, then two function_call items; streamed the same", async (t) => {
  const responsesTools = tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
  }));
  const body = { model: "any", input: "Weather and notes, Codex?", tools: responsesTools };
  const reply = (await (await psyche.request("/v1/responses", { body })).json()) as any;
  t.same(
    reply.output.map((o: any) => o.type),
    ["reasoning", "function_call", "function_call"],
  );
  t.same(
    reply.output.slice(1).map((o: any) => [o.name, JSON.parse(o.arguments)]),
    [
      ["get_weather", { city: "Paris" }],
      ["read_file", { path: "notes.txt" }],
    ],
  );

  const streamed = await sseEvents(await psyche.request("/v1/responses", { body: { ...body, stream: true } }));
  const done = streamed.filter((e) => e.data?.type === "response.output_item.done").map((e) => e.data.item);
  t.same(
    done.map((o: any) => [o.type, o.name]),
    [
      ["reasoning", undefined],
      ["function_call", "get_weather"],
      ["function_call", "read_file"],
    ],
  );
});

/**
 * Qwen3-Coder writes one `<parameter=…>` block per argument, its value as plain text, which
 * node-llama-cpp's function calling cannot hold: the calls are read off the text
 * (src/inference/families/text-calls.ts), after a sentence of text, two of them, a number
 * argument as a number; and a past call is rendered back in the same form.
 */
t.test("qwen3-coder: text, then two calls in its XML form, read as calls; the text before them stays text", async (t) => {
  const xml = (name: string, args: Record<string, string>) =>
    `<tool_call>\n<function=${name}>\n${Object.entries(args)
      .map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`)
      .join("")}</function>\n</tool_call>`;
  const coderTools: ToolSpec[] = [
    tools[0]!,
    {
      name: "read_file",
      description: "Read lines of a file",
      parameters: { type: "object", properties: { path: { type: "string" }, lines: { type: "integer" } }, required: ["path"] },
    },
  ];
  const reply = `Let me look.\n${xml("get_weather", { city: "Paris" })}\n${xml("read_file", { path: "src/a b.ts", lines: "20" })}`;
  // A forced call is the grammar's alone.
  const coder = await familyEngine("qwen3-coder", (request) =>
    typeof request.toolChoice === "object" ? undefined : request.tools?.length ? reply : "<tool_call> is a tag.",
  );
  t.teardown(() => coder.dispose());
  const streamed: string[] = [];
  const r = await modelOf(coder).generate({
    messages: [{ role: "user", content: "Weather in Paris, and the file?" }],
    maxTokens: 300,
    tools: coderTools,
    toolChoice: "auto",
    onText: (piece) => streamed.push(piece),
  });
  t.equal(r.finishReason, "tool_calls");
  t.same(
    r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [
      ["get_weather", { city: "Paris" }],
      ["read_file", { path: "src/a b.ts", lines: 20 }],
    ],
    "both calls; a string stays a string, an integer is a number",
  );
  t.equal(r.text, "Let me look.\n", "the text before the calls");
  t.equal(streamed.join(""), "Let me look.\n", "and only that streamed");

  const one = await modelOf(coder).generate({
    messages: [{ role: "user", content: "Weather in Paris, and the file?" }],
    maxTokens: 300,
    tools: coderTools,
    toolChoice: "auto",
    parallelToolCalls: false,
  });
  t.same(
    one.toolCalls.map((c) => c.name),
    ["get_weather"],
    "parallel_tool_calls false: the first call only",
  );

  // A boolean: the random model's call is whole within a few tokens.
  const toggle: ToolSpec = {
    name: "toggle",
    description: "Switch it",
    parameters: { type: "object", properties: { on: { type: "boolean" } }, required: ["on"], additionalProperties: false },
  };
  const forced = await modelOf(coder).generate({
    messages: [{ role: "user", content: "Switch it" }],
    maxTokens: 100,
    tools: [...coderTools, toggle],
    toolChoice: { name: "toggle" },
  });
  t.equal(forced.toolCalls[0]?.name, "toggle", "a named call is forced");
  t.type(JSON.parse(forced.toolCalls[0]?.arguments ?? "{}").on, "boolean", "with the schema's arguments");
  const plain = await modelOf(coder).generate({ messages: [{ role: "user", content: "What is that tag?" }], maxTokens: 100 });
  t.equal(plain.text, "<tool_call> is a tag.", "without tools, the text is the text");

  const { prompt } = await rendered(t, coder, "qwen3-coder", {
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' }] },
      { role: "tool", toolCallId: "c1", content: "sunny, 24 C" },
    ],
    maxTokens: 10,
    tools: coderTools,
  });
  t.match(prompt, /<function=get_weather>\n<parameter=city>\nParis\n<\/parameter>\n<\/function>/, "a past call as Qwen3-Coder writes it");
  t.notMatch(prompt, /<parameter=params>/);
  t.match(prompt, /If you choose to call a tool ONLY reply in the following format/, "the tools offered by the template's own words");
});

t.test("gemma4: two calls in its notation, nested values read; past calls, results and the tools rendered in it", async (t) => {
  const schedule: ToolSpec = {
    name: "schedule",
    description: "Book a slot",
    parameters: {
      type: "object",
      properties: {
        when: { type: "object", properties: { day: { type: "string" }, hour: { type: "integer" } }, required: ["day"] },
        who: { type: "array", items: { type: "string" } },
        urgent: { type: "boolean" },
      },
      required: ["when"],
    },
  };
  const written =
    '<|tool_call>call:get_weather{city:<|"|>Paris, France<|"|>}<tool_call|>' +
    '<|tool_call>call:schedule{urgent:false,when:{day:<|"|>Mon<|"|>,hour:9},who:[<|"|>Ann<|"|>,<|"|>Bo<|"|>]}<tool_call|>';
  const gemma = await familyEngine("gemma4", () => written);
  t.teardown(() => gemma.dispose());
  const r = await modelOf(gemma).generate({
    messages: [{ role: "user", content: "Weather, and book Monday" }],
    maxTokens: 200,
    tools: [tools[0]!, schedule],
    toolChoice: "auto",
  });
  t.same(
    r.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [
      ["get_weather", { city: "Paris, France" }],
      ["schedule", { urgent: false, when: { day: "Mon", hour: 9 }, who: ["Ann", "Bo"] }],
    ],
  );
  t.equal(r.text, "");
  const { prompt, vocabulary } = await rendered(t, gemma, "gemma4", {
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "get_weather", arguments: '{"city":"Paris"}' }] },
      { role: "tool", toolCallId: "c1", content: "sunny" },
    ],
    maxTokens: 10,
    tools: [tools[0]!, schedule],
  });
  t.match(prompt, '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>', "a past call in Gemma's notation");
  t.match(prompt, '<|tool_response>response:get_weather{value:<|"|>sunny<|"|>}<tool_response|>', "its result");
  t.match(
    prompt,
    '<|tool>declaration:get_weather{description:<|"|>The weather in a city<|"|>,parameters:{properties:{city:{type:<|"|>STRING<|"|>}},required:[<|"|>city<|"|>],type:<|"|>OBJECT<|"|>}}<tool|>',
    "the tools declared as its template declares them",
  );
  t.notMatch(prompt, /"city"/, "no JSON");
  const quote = gemma.render({ messages: [{ role: "user", content: "x" }], maxTokens: 1, tools: [tools[0]!] }).tokens;
  t.ok(quote.includes(vocabulary.tokenize('<|"|>', true)[0]!), "the string delimiter is its own token, not spelled out");
});

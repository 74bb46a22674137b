// Function calls from the real engine on the tiny random model: forced by tool_choice, the
// call is grammar-constrained, so even random weights name a real tool with valid arguments.
import t from "tap";
import { modelOf } from "../helpers/model-of.js";
import { createLlamaEngine } from "../../src/inference/create-engine.js";
import type { ToolSpec } from "../../src/tools/types.js";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import { offeredFunctions, wholeJsonObject } from "../../src/inference/llama-engine.js";
import { toGrammarSchema, ToolSchemaError } from "../../src/tools/grammar-schema.js";
import { argumentProblems } from "../../src/tools/arguments.js";
import { createLogger } from "../../src/log.js";
import { ContextOverflow } from "../../src/errors.js";
import { serverDir } from "../helpers/testdir.js";

const dataDir = serverDir(t);
const engine = await createLlamaEngine(
  { model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 1, contextSize: 4096 },
  createLogger("silent"),
);
t.teardown(() => engine.dispose());

const tools: ToolSpec[] = [
  {
    name: "read_file",
    description: "Read a file in the workspace",
    parameters: { type: "object", properties: { path: { type: "string", maxLength: 40 } }, required: ["path"] },
  },
  {
    name: "get_weather",
    description: "The weather in a city",
    parameters: {
      type: "object",
      properties: { city: { type: "string", maxLength: 30 }, unit: { enum: ["celsius", "fahrenheit"] } },
      required: ["city", "unit"],
    },
  },
];
const messages = [{ role: "user" as const, content: "What is in notes.txt, and is it raining in Paris?" }];

t.test("tool_choice required: a call to one of the tools, with JSON arguments", async (t) => {
  const r = await modelOf(engine).generate({ messages, maxTokens: 300, seed: 4, tools, toolChoice: "required" });
  t.equal(r.finishReason, "tool_calls");
  t.equal(r.toolCalls.length, 1);
  const call = r.toolCalls[0]!;
  t.ok(["read_file", "get_weather"].includes(call.name), call.name);
  const args = JSON.parse(call.arguments) as Record<string, unknown>;
  t.type(args, "object");
  if (call.name === "read_file") t.type(args.path, "string");
  else t.ok(["celsius", "fahrenheit"].includes(args.unit as string));
  t.ok(r.completionTokens > 0);
  t.same(call.problems, [], "valid against the tool's own schema");
});

t.test("a named tool_choice calls that tool; the same seed makes the same call", async (t) => {
  const ask = () => modelOf(engine).generate({ messages, maxTokens: 300, seed: 9, tools, toolChoice: { name: "get_weather" } });
  const [a, b] = [await ask(), await ask()];
  t.equal(a.toolCalls[0]?.name, "get_weather");
  const args = JSON.parse(a.toolCalls[0]!.arguments) as { city: unknown; unit: unknown };
  t.type(args.city, "string");
  t.ok((args.city as string).length <= 30, "the grammar keeps the schema's maxLength");
  t.ok(["celsius", "fahrenheit"].includes(args.unit as string), "and its enum");
  t.same(b.toolCalls, a.toolCalls);
});

t.test("an integer in a grammar-constrained reply is always a safe integer, a number always finite, over many seeds", async (t) => {
  // Random weights like long digit runs: before numbers were bounded, an integer could come as
  // 9507E87777726651926 (JSON.parse: Infinity).
  const counts = {
    type: "object",
    properties: { count: { type: "integer" }, ratio: { type: "number" }, all: { type: "array", items: { type: "integer" }, maxItems: 4 } },
    required: ["count", "ratio", "all"],
  };
  const numberTool: ToolSpec[] = [{ name: "count_things", description: "Count things", parameters: counts }];
  const seen = { integers: 0, numbers: 0 };
  for (let seed = 1; seed <= 40; seed++) {
    const call = await modelOf(engine).generate({
      messages,
      maxTokens: 200,
      seed,
      tools: numberTool,
      toolChoice: { name: "count_things" },
    });
    const reply = await modelOf(engine).generate({
      messages,
      maxTokens: 200,
      seed,
      responseFormat: { type: "json_schema", name: "counts", strict: true, schema: counts },
    });
    for (const [what, text] of [
      ["call", call.toolCalls[0]?.arguments],
      ["reply", reply.text],
    ] as const) {
      if (text === undefined || (what === "reply" && reply.finishReason !== "stop")) continue;
      const v = JSON.parse(text) as { count: number; ratio: number; all: number[] };
      for (const n of [v.count, ...v.all]) {
        if (!Number.isSafeInteger(n)) t.fail(`seed ${seed}, ${what}: ${n} is not a safe integer in ${text}`);
        seen.integers++;
      }
      if (!Number.isFinite(v.ratio)) t.fail(`seed ${seed}, ${what}: ratio ${v.ratio} is not finite in ${text}`);
      seen.numbers++;
    }
    const grammarText = `${call.toolCalls[0]?.arguments ?? ""} ${reply.text}`;
    if (/"count"\s*:\s*-?\d+[eE.]/.test(grammarText)) t.fail(`seed ${seed}: an integer with a fraction or an exponent: ${grammarText}`);
  }
  t.ok(seen.integers >= 40, `${seen.integers} integers, all safe`);
  t.ok(seen.numbers >= 40, `${seen.numbers} numbers, all finite`);
});

t.test("tool_choice none, or auto with a model that never calls: text", async (t) => {
  const none = await modelOf(engine).generate({ messages, maxTokens: 12, seed: 1, tools, toolChoice: "none" });
  t.equal(none.finishReason, "length");
  t.same(none.toolCalls, []);
  t.ok(none.text.length > 0);
  const auto = await modelOf(engine).generate({ messages, maxTokens: 12, seed: 1, tools });
  t.same(auto.toolCalls, []);
  t.ok(auto.text.length > 0);
});

t.test("offering functions: named choice must exist", async (t) => {
  t.throws(() => offeredFunctions({ tools, toolChoice: { name: "delete_everything" } }), /not among the tools/);
  t.same(offeredFunctions({ tools: [], toolChoice: "required" }), { functions: undefined, forced: false });
  t.equal(offeredFunctions({ tools, toolChoice: "auto" }).forced, false);
  t.same(Object.keys(offeredFunctions({ tools, toolChoice: { name: "read_file" } }).functions!), ["read_file"]);
});

t.test("whole JSON objects", async (t) => {
  t.ok(wholeJsonObject('{"a": {"b": "}"}}'));
  t.notOk(wholeJsonObject('{"a": {"b": "}"}'));
  t.notOk(wholeJsonObject("[1]"));
  t.notOk(wholeJsonObject('{"a": 1} trailing'));
});

t.test("client schemas become grammar schemas", async (t) => {
  t.same(toGrammarSchema(undefined), { type: "object", properties: {}, additionalProperties: false });
  t.same(
    toGrammarSchema({
      type: "object",
      properties: { n: { type: "integer", minimum: 1 }, s: { type: "string" } },
      required: ["n", "ghost"],
    }),
    {
      type: "object",
      properties: { n: { type: "integer" }, s: { type: "string", maxLength: 1024 } },
      additionalProperties: false,
      required: ["n"],
    },
  );
  const mixed = toGrammarSchema({
    type: "object",
    properties: { x: { type: ["string", "null"] }, y: { anyOf: [{ type: "number" }, { const: "auto" }] } },
  });
  t.same((mixed as { properties?: unknown }).properties, {
    x: { type: ["string", "null"] },
    y: { oneOf: [{ type: "number" }, { const: "auto" }] },
  });
  t.throws(() => toGrammarSchema({ type: "object", properties: { bad: { type: "tuple" } } }), ToolSchemaError);
  t.throws(() => toGrammarSchema("object"), /must be an object/);
});

t.test("arguments are checked against the tool's own schema, for what the grammar cannot enforce", async (t) => {
  const add: ToolSpec[] = [
    {
      name: "add",
      parameters: { type: "object", properties: { a: { type: "number", maximum: 10 }, b: { type: "integer" } }, required: ["a"] },
    },
  ];
  t.same(argumentProblems(add, { name: "add", arguments: '{"a": 3, "b": 4}' }), []);
  t.match(argumentProblems(add, { name: "add", arguments: '{"a": 926}' }), [/\/a must be <= 10/]);
  t.match(argumentProblems(add, { name: "add", arguments: '{"a": 1, "b": null}' }), [/\/b must be integer/]);
  t.match(argumentProblems(add, { name: "add", arguments: "{}" }), [/must have required property 'a'/]);
  t.match(argumentProblems(add, { name: "add", arguments: "{nope" }), [/not JSON/]);
  t.match(argumentProblems(add, { name: "sub", arguments: "{}" }), [/no tool named "sub"/]);
  t.match(
    argumentProblems([{ name: "odd", parameters: { type: "object", properties: { x: { type: 5 } } } }], { name: "odd", arguments: "{}" }),
    [/not valid JSON Schema/],
  );
  // The random model fills an optional number with null or a huge value: reported, not hidden.
  const forced = await modelOf(engine).generate({ messages, maxTokens: 300, seed: 1, tools: add, toolChoice: "required" });
  t.equal(forced.toolCalls[0]?.name, "add");
  t.same(forced.toolCalls[0]!.problems, argumentProblems(add, forced.toolCalls[0]!));
});

t.test("tools whose definitions fill the context: refused before the model reads, counted as the model renders them", async (t) => {
  // The messages alone are a few tokens; the definitions, which the chat wrapper writes into
  // the system prompt, are past the 4,096-token context. Counted without them, the prompt went
  // to node-llama-cpp, which failed mid-turn ("did not return a history that fits").
  const long: ToolSpec[] = [
    { name: "read_file", description: "Read a file in the workspace. ".repeat(400), parameters: { type: "object", properties: {} } },
  ];
  const refused = await modelOf(engine)
    .generate({ messages, maxTokens: 50, seed: 1, tools: long, toolChoice: "auto" })
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  t.ok(refused instanceof ContextOverflow, `a ContextOverflow: ${String(refused)}`);
  const overflow = refused as ContextOverflow;
  t.equal(overflow.contextSize, 4096);
  t.ok(overflow.promptTokens > 4096, `the prompt as rendered, definitions included (${overflow.promptTokens})`);
  const fine = await modelOf(engine).generate({ messages, maxTokens: 8, seed: 1, tools, toolChoice: "auto" });
  t.ok(fine.completionTokens > 0, "the engine answers the next prompt that fits");
});

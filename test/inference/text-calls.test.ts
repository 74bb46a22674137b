// Calls read off the reply's text (src/inference/families/text-calls.ts): Qwen3-Coder's XML form,
// each value as its schema asks, and the stream held back from a call's opening, never longer.
import t from "tap";
import { CallHold, llamaJsonCalls, qwenXmlCalls } from "../../src/inference/families/text-calls.js";
import type { ToolSpec } from "../../src/tools/types.js";

const tools: ToolSpec[] = [
  {
    name: "edit",
    description: "Edit a file",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        line: { type: "integer" },
        dry: { type: "boolean" },
        opts: { type: "object" },
        code: { type: "string" },
      },
    },
  },
];

t.test("Qwen3-Coder's calls: one or more, each parameter as its schema asks", async (t) => {
  const text =
    "<tool_call>\n<function=edit>\n<parameter=path>\nsrc/a.ts\n</parameter>\n<parameter=line>\n12\n</parameter>\n" +
    '<parameter=dry>\ntrue\n</parameter>\n<parameter=opts>\n{"indent": 2}\n</parameter>\n<parameter=code>\n42\n</parameter>\n' +
    "</function>\n</tool_call>\n<tool_call>\n<function=unknown>\n<parameter=x>\n[1, 2]\n</parameter>\n</function>\n</tool_call>\n";
  const calls = qwenXmlCalls.parse(text, tools)!;
  t.same(
    calls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [
      ["edit", { path: "src/a.ts", line: 12, dry: true, opts: { indent: 2 }, code: "42" }],
      ["unknown", { x: [1, 2] }],
    ],
    "a string stays a string however it reads; the rest is JSON where it is JSON",
  );
  const multiline = qwenXmlCalls.parse(
    "<tool_call>\n<function=edit>\n<parameter=code>\nif (a) {\n  b();\n}\n</parameter>\n</function>\n</tool_call>",
    tools,
  );
  t.same(JSON.parse(multiline![0]!.arguments), { code: "if (a) {\n  b();\n}" }, "a value over several lines, whole");
  t.same(
    JSON.parse(qwenXmlCalls.parse("<tool_call>\n<function=edit>\n</function>\n</tool_call>", tools)![0]!.arguments),
    {},
    "no arguments",
  );
});

t.test("what is not only whole calls is not calls", async (t) => {
  t.equal(qwenXmlCalls.parse("<tool_call>\n<function=edit>\n<parameter=path>\nsrc", tools), undefined, "cut off");
  t.equal(qwenXmlCalls.parse("<tool_call> is a tag.", tools), undefined, "the tag in prose");
  t.equal(
    qwenXmlCalls.parse("<tool_call>\n<function=edit>\n</function>\n</tool_call>\nand then I said more", tools),
    undefined,
    "text after the calls",
  );
});

t.test("the stream is held back from a call's opening, and from what may begin one, no longer", async (t) => {
  const hold = new CallHold(qwenXmlCalls);
  t.equal(hold.relay("Let me "), "Let me ");
  t.equal(hold.relay("look <tool"), "look ", "what may begin an opening waits");
  t.equal(hold.relay("s> here"), "<tools> here", "and goes on once it does not");
  t.equal(hold.relay(".\n<tool_"), ".\n");
  t.equal(hold.relay("call>\n<function=edit>"), "", "an opening holds the rest");
  t.equal(hold.relay("\n</function>\n</tool_call>"), "");
  t.equal(hold.text, "Let me look <tools> here.\n");
  t.equal(hold.held, "<tool_call>\n<function=edit>\n</function>\n</tool_call>");
  const plain = new CallHold(qwenXmlCalls);
  t.equal(plain.relay("no calls at all"), "no calls at all");
  t.equal(plain.held, "");
});

t.test("Llama 3.1's JSON form: the whole reply, one call or more, parameters or arguments", async (t) => {
  const read = (text: string) => llamaJsonCalls.parse(text, tools)?.map((c) => [c.name, JSON.parse(c.arguments)]);
  t.same(read('{"name": "edit", "parameters": {"path": "a.ts", "code": "x = {\\"}\\""}}'), [["edit", { path: "a.ts", code: 'x = {"}"' }]]);
  t.same(read('<|python_tag|>{"name": "edit", "arguments": {"line": 2}}'), [["edit", { line: 2 }]], "after the python tag");
  t.same(
    read('{"name": "a", "parameters": {}}; {"name": "b", "parameters": {"n": 1}}'),
    [
      ["a", {}],
      ["b", { n: 1 }],
    ],
    "several",
  );
  t.equal(read('{"a": 1}'), undefined, "JSON that is not a call");
  t.equal(read('{"name": "edit", "parameters": {"path": "a.ts"}} and more'), undefined, "text after it");
  t.equal(read('{"name": "edit", "parameters": {"path": "a.'), undefined, "cut off");
});

t.test("held only at the reply's start, for the JSON form", async (t) => {
  const call = new CallHold(llamaJsonCalls);
  t.equal(call.relay("  "), "", "whitespace waits");
  t.equal(call.relay('{"name"'), "  ", "a reply that opens with a brace is held from it");
  t.equal(call.held, '{"name"');
  const tagged = new CallHold(llamaJsonCalls);
  t.equal(tagged.relay("<|python"), "");
  t.equal(tagged.relay('_tag|>{"name"'), "", "after the python tag too");
  const prose = new CallHold(llamaJsonCalls);
  t.equal(prose.relay("Use {braces}"), "Use {braces}", "a reply that does not open with one streams");
  t.equal(prose.relay(' and {"name": 1}'), ' and {"name": 1}', "whatever follows");
});

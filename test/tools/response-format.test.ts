// response_format checked before anything is stored, and a finished reply checked against it.
import t from "tap";
import { replyProblems, requestResponseFormat, ResponseFormatSchema } from "../../src/tools/response-format.js";
import { wholeJsonValue } from "../../src/inference/llama-engine.js";

const schema = {
  type: "object",
  properties: { n: { type: "integer", minimum: 1 }, s: { type: "string", format: "email" } },
  required: ["n"],
};
const parse = (x: unknown) => ResponseFormatSchema.parse(x);

t.test("formats: text is none; json_object; json_schema with its name, schema and strictness", async (t) => {
  t.equal(requestResponseFormat(parse({ type: "text" }), false), null);
  t.equal(requestResponseFormat(undefined, false), null);
  t.same(requestResponseFormat(parse({ type: "json_object" }), false), { type: "json_object" });
  t.same(requestResponseFormat(parse({ type: "json_schema", json_schema: { name: "a", schema } }), false), {
    type: "json_schema",
    name: "a",
    schema,
    strict: false,
  });
  t.same(
    requestResponseFormat(parse({ type: "json_schema", json_schema: { name: "a" } }), false),
    { type: "json_schema", name: "a", schema: { type: "object" }, strict: false },
    "no schema: any object",
  );
  t.throws(() => parse({ type: "xml" }), /response_format.type must be text, json_object or json_schema/);
});

t.test("strict refuses what a grammar cannot hold, naming where; property names are not keywords", async (t) => {
  t.throws(() => requestResponseFormat(parse({ type: "json_schema", json_schema: { name: "a", schema, strict: true } }), false), {
    message: /"minimum" \(at schema\.properties\.n\.minimum\)/,
    param: "response_format.json_schema.schema",
  });
  const named = { type: "object", properties: { pattern: { type: "string", maxLength: 4 }, format: { type: "boolean" } } };
  t.ok(requestResponseFormat(parse({ type: "json_schema", json_schema: { name: "a", schema: named, strict: true } }), false));
  t.throws(() => requestResponseFormat(parse({ type: "json_object" }), true), {
    param: "response_format",
    message: /cannot be combined with tools/,
  });
});

t.test("a finished reply: valid, cut off, not JSON, the wrong kind, breaking the schema", async (t) => {
  const fmt = { type: "json_schema" as const, name: "a", schema, strict: false };
  t.same(replyProblems(fmt, '{"n": 2}', "stop"), []);
  t.same(replyProblems(fmt, '{"n": ', "length"), ["the reply was cut off by max_tokens before its JSON ended"]);
  t.match(replyProblems(fmt, "hello", "stop"), [/^the reply is not JSON/]);
  t.same(replyProblems({ type: "json_object" }, "[1]", "stop"), ["the reply is not a JSON object"]);
  t.same(replyProblems(fmt, '{"n": 0, "s": "nope"}', "stop"), ["/n must be >= 1", '/s must match format "email"']);
});

t.test("a JSON reply has ended at a closing brace, bracket or quote, not a number that may go on", async (t) => {
  t.ok(wholeJsonValue('{"a": 1}'));
  t.ok(wholeJsonValue(" [1, 2] "));
  t.notOk(wholeJsonValue('{"a": 1'));
  t.notOk(wholeJsonValue("12"));
  t.notOk(wholeJsonValue(""));
});

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Structured output (response_format) end to end with the openai SDK and the tiny random model:
// the grammar holds even a random model to the schema, streaming or not, beside memory recall
// and the persona; what cannot be enforced is refused up front (strict) or reported afterwards;
// bad formats are a 400 in OpenAI's shape that names the field, and store nothing.
import t from "tap";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";
import { startPsyche, writtenRows } from "../helpers/psyche.js";

const psyche = await startPsyche(t, {});
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const user = (content: string) => ({ role: "user" as const, content });
// Bounded, so a random model's answer ends: an enum, a short string, a small integer list.
const schema = {
  type: "object",
  properties: {
    mood: { type: "string", enum: ["calm", "glad", "sad"] },
    note: { type: "string", maxLength: 24 },
    ok: { type: "boolean" },
  },
  required: ["mood", "note", "ok"],
  additionalProperties: false,
};
const format = { type: "json_schema" as const, json_schema: { name: "feeling", schema, strict: true } };
function matches(value: any): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    ["calm", "glad", "sad"].includes(value.mood) &&
    typeof value.note === "string" &&
    value.note.length <= 24 &&
    typeof value.ok === "boolean" &&
    Object.keys(value).length === 3
  );
}

t.test("json_schema: the reply is JSON of the schema, for several seeds, with recall on", async (t) => {
  await psyche.mem.memory.remember({ kind: "semantic", content: "The user likes short answers about feelings", sourceKind: "api" });
  for (const seed of [1, 2, 3]) {
    const { data, response } = await client.chat.completions
      .create({ model: "psyche", messages: [user("How do you feel about feelings?")], response_format: format, max_tokens: 300, seed })
      .withResponse();
    const choice = data.choices[0]!;
    t.equal(choice.finish_reason, "stop", `seed ${seed}: it ended by itself`);
    const value = JSON.parse(choice.message.content!);
    t.ok(matches(value), `seed ${seed}: ${choice.message.content}`);
    t.notOk((data as any).psyche.response_format_problems, "no problems reported");
    const stored = await psyche.db.pool.query("select response_format, content from turns where id = $1", [
      response.headers.get("x-psyche-turn"),
    ]);
    t.match(stored.rows[0], {
      response_format: { type: "json_schema", name: "feeling", strict: true, schema },
      content: choice.message.content,
    });
  }
});

t.test("json_schema streamed: the deltas join into JSON of the schema", async (t) => {
  const stream = await client.chat.completions.create({
    model: "psyche",
    messages: [user("And now?")],
    response_format: format,
    max_tokens: 300,
    seed: 9,
    stream: true,
  });
  let text = "";
  let finish: string | null = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.equal(finish, "stop");
  t.ok(matches(JSON.parse(text)), text);
});

t.test("json_object: any JSON object", async (t) => {
  const data = await client.chat.completions.create({
    model: "psyche",
    messages: [user("Give me an object")],
    response_format: { type: "json_object" },
    max_tokens: 400,
    seed: 5,
  });
  const content = data.choices[0]!.message.content!;
  if (data.choices[0]!.finish_reason === "stop") {
    const value = JSON.parse(content);
    t.ok(typeof value === "object" && value !== null && !Array.isArray(value), content);
  } else {
    // A random model may write a long object: then it is cut, and says so.
    t.equal(data.choices[0]!.finish_reason, "length");
    t.same((data as any).psyche.response_format_problems, ["the reply was cut off by max_tokens before its JSON ended"]);
  }
});

t.test("cut off by max_tokens: the reply says its JSON is unfinished, streaming or not", async (t) => {
  const data = await client.chat.completions.create({
    model: "psyche",
    messages: [user("Quickly")],
    response_format: format,
    max_tokens: 3,
    seed: 1,
  });
  t.equal(data.choices[0]!.finish_reason, "length");
  t.same((data as any).psyche.response_format_problems, ["the reply was cut off by max_tokens before its JSON ended"]);
  const stream = await client.chat.completions.create({
    model: "psyche",
    messages: [user("Quickly")],
    response_format: format,
    max_tokens: 3,
    seed: 1,
    stream: true,
  });
  let last: any;
  for await (const chunk of stream) if (chunk.choices[0]?.finish_reason) last = chunk;
  t.same(last.psyche.response_format_problems, ["the reply was cut off by max_tokens before its JSON ended"]);
});

t.test("not strict: what the grammar cannot enforce is checked afterwards and reported", async (t) => {
  const loose = {
    type: "object",
    properties: { code: { type: "string", maxLength: 8, pattern: "^[0-9]{8}$" } },
    required: ["code"],
    additionalProperties: false,
  };
  const data = await client.chat.completions.create({
    model: "psyche",
    messages: [user("A code")],
    response_format: { type: "json_schema", json_schema: { name: "code", schema: loose } },
    max_tokens: 200,
    seed: 2,
  });
  const value = JSON.parse(data.choices[0]!.message.content!);
  t.type(value.code, "string");
  if (/^[0-9]{8}$/.test(value.code)) t.notOk((data as any).psyche.response_format_problems);
  else t.match((data as any).psyche.response_format_problems, [/\/code must match pattern/]);
});

t.test("bad formats are a 400 naming the field, and store nothing", async (t) => {
  const before = await writtenRows(psyche);
  const post = (body: Record<string, unknown>) =>
    fetch(`${psyche.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "psyche", messages: [user("hi")], ...body }),
    });
  const cases: [string, Record<string, unknown>, RegExp, string][] = [
    ["xml", { response_format: { type: "xml" } }, /response_format\.type must be text, json_object or json_schema/, "response_format.type"],
    ["no name", { response_format: { type: "json_schema", json_schema: { schema } } }, /name/, "response_format.json_schema.name"],
    [
      "strict with a pattern",
      {
        response_format: {
          type: "json_schema",
          json_schema: { name: "x", strict: true, schema: { type: "object", properties: { a: { type: "string", pattern: "^a$" } } } },
        },
      },
      /"pattern" .*cannot be enforced/,
      "response_format.json_schema.schema",
    ],
    [
      "a $ref",
      { response_format: { type: "json_schema", json_schema: { name: "x", schema: { $ref: "#/$defs/a" } } } },
      /response_format\.json_schema\.schema: schema: no type/,
      "response_format.json_schema.schema",
    ],
    [
      "not JSON Schema",
      {
        response_format: {
          type: "json_schema",
          json_schema: { name: "x", schema: { type: "object", properties: { a: { type: "strin" } } } },
        },
      },
      /response_format\.json_schema\.schema/,
      "response_format.json_schema.schema",
    ],
    [
      "beside tools",
      {
        response_format: { type: "json_object" },
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: {} } } }],
      },
      /cannot be combined with tools/,
      "response_format",
    ],
  ];
  for (const [what, body, message, param] of cases) {
    const res = await post(body);
    t.equal(res.status, 400, what);
    const err = ((await res.json()) as any).error;
    t.match(err, { type: "invalid_request_error", message, param }, what);
  }
  t.same(await writtenRows(psyche), before, "nothing was stored");
  const none = await post({
    response_format: { type: "json_object" },
    tool_choice: "none",
    tools: [{ type: "function", function: { name: "f" } }],
    max_tokens: 60,
  });
  t.equal(none.status, 200, 'tools with tool_choice "none" leave the format free to apply');
  const text = await post({ response_format: { type: "text" }, max_tokens: 2 });
  t.equal(text.status, 200, '"text" is free text, as without a format');
});

t.test("the openai SDK's own structured-output helper: parse() with a zod schema", async (t) => {
  const Feeling = z.object({ mood: z.enum(["calm", "glad", "sad"]), note: z.string().max(24), ok: z.boolean() });
  const completion = await client.chat.completions.parse({
    model: "psyche",
    messages: [user("How are you?")],
    response_format: zodResponseFormat(Feeling, "feeling"),
    max_tokens: 300,
    seed: 4,
  });
  const parsed = completion.choices[0]!.message.parsed;
  t.ok(parsed, "the SDK parsed the reply into the schema");
  t.ok(["calm", "glad", "sad"].includes(parsed!.mood));
  t.type(parsed!.ok, "boolean");
});

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Client tools end to end with the openai SDK: Psyche returns the calls, never runs them; a
// forced call from the tiny random model is valid; the client's results continue the turn.
import t from "tap";
import OpenAI from "openai";
import { startPsyche, writtenRows } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const tools = [
  {
    type: "function" as const,
    function: {
      name: "read_file",
      description: "Read a file in the workspace",
      parameters: { type: "object", properties: { path: { type: "string", maxLength: 40 } }, required: ["path"] },
    },
  },
  {
    type: "function" as const,
    function: {
      name: "list_directory",
      description: "List a directory",
      parameters: { type: "object", properties: { dir: { type: "string", maxLength: 40 } } },
    },
  },
];
const user = (content: string) => ({ role: "user" as const, content });

t.test("a forced call comes back as tool_calls, not run, and is stored", async (t) => {
  const { data, response } = await client.chat.completions
    .create({
      model: "psyche",
      messages: [user("What is in notes.txt?")],
      tools,
      tool_choice: { type: "function", function: { name: "read_file" } },
      max_tokens: 200,
      seed: 3,
    })
    .withResponse();
  const choice = data.choices[0]!;
  t.equal(choice.finish_reason, "tool_calls");
  const call = choice.message.tool_calls![0]!;
  t.equal(call.type, "function");
  t.match(call.id, /^call_[0-9a-f]{24}$/);
  if (call.type !== "function") throw new Error("not a function call");
  t.equal(call.function.name, "read_file");
  t.type(JSON.parse(call.function.arguments).path, "string");
  t.equal(choice.message.content, null);
  t.ok(data.usage!.completion_tokens > 0);
  const stored = await psyche.db.pool.query("select role, tool_calls from messages where turn_id = $1 and role = 'assistant'", [
    response.headers.get("x-psyche-turn"),
  ]);
  t.same(stored.rows[0].tool_calls, [{ id: call.id, name: "read_file", arguments: call.function.arguments }]);
});

t.test("streaming: delta.tool_calls chunks that the SDK's stream helper accumulates", async (t) => {
  const stream = client.chat.completions.stream({
    model: "psyche",
    messages: [user("list the files")],
    tools,
    tool_choice: "required",
    max_tokens: 200,
    seed: 5,
  });
  const final = await stream.finalChatCompletion();
  const choice = final.choices[0]!;
  t.equal(choice.finish_reason, "tool_calls");
  const call = choice.message.tool_calls?.[0];
  t.ok(call && call.type === "function" && ["read_file", "list_directory"].includes(call.function.name));
  if (call?.type === "function") t.type(JSON.parse(call.function.arguments), "object");
  // Same request without streaming, same seed: the same call.
  const plain = await client.chat.completions.create({
    model: "psyche",
    messages: [user("list the files")],
    tools,
    tool_choice: "required",
    max_tokens: 200,
    seed: 5,
  });
  const p = plain.choices[0]!.message.tool_calls![0]!;
  if (p.type === "function" && call?.type === "function")
    t.same([p.function.name, p.function.arguments], [call.function.name, call.function.arguments]);
});

t.test("the client's results continue the conversation", async (t) => {
  const first = await client.chat.completions.create({
    model: "psyche",
    messages: [user("Read notes.txt")],
    tools,
    tool_choice: "required",
    max_tokens: 200,
    seed: 8,
  });
  const assistant = first.choices[0]!.message;
  const call = assistant.tool_calls![0]!;
  const next = await client.chat.completions.create({
    model: "psyche",
    messages: [
      user("Read notes.txt"),
      { role: "assistant", content: assistant.content, tool_calls: assistant.tool_calls },
      { role: "tool", tool_call_id: call.id, content: "buy milk" },
    ],
    tools,
    max_tokens: 16,
    seed: 8,
  });
  t.equal(next.choices[0]!.finish_reason, "length", "the model went on in text");
  t.ok(next.usage!.prompt_tokens > first.usage!.prompt_tokens, "with the call and its result in the prompt");

  // Continuing by id: only the tool message is new.
  const id = "tools-by-id";
  const opened = await client.chat.completions.create(
    { model: "psyche", messages: [user("Read notes.txt")], tools, tool_choice: "required", max_tokens: 200, seed: 8 },
    { headers: { "X-Psyche-Conversation": id } },
  );
  const c2 = opened.choices[0]!.message.tool_calls![0]!;
  const answered = await client.chat.completions.create(
    { model: "psyche", messages: [{ role: "tool", tool_call_id: c2.id, content: "buy milk" }], tools, max_tokens: 8 },
    { headers: { "X-Psyche-Conversation": id } },
  );
  t.equal(answered.choices[0]!.finish_reason, "length");
  const roles = await psyche.db.pool.query("select role from messages where conversation_id = $1 order by position", [id]);
  t.same(
    roles.rows.map((r) => r.role),
    ["user", "assistant", "tool", "assistant"],
  );
});

t.test("bad tool input: a 400 in OpenAI's shape, nothing written", async (t) => {
  const before = await writtenRows(psyche);
  const call = { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } };
  const cases: [string, Record<string, unknown>, string][] = [
    [
      "unknown tool_call_id",
      {
        messages: [
          user("x"),
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: "call_2", content: "r" },
        ],
      },
      "invalid_tool_message",
    ],
    [
      "a tool message without its call",
      { messages: [user("x"), { role: "tool", tool_call_id: "call_1", content: "r" }] },
      "invalid_tool_message",
    ],
    [
      "answered twice",
      {
        messages: [
          user("x"),
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: "call_1", content: "r" },
          { role: "tool", tool_call_id: "call_1", content: "r" },
        ],
      },
      "invalid_tool_message",
    ],
    ["tool message without tool_call_id", { messages: [user("x"), { role: "tool", content: "r" }] }, "invalid_value"],
    [
      "malformed arguments",
      {
        messages: [
          user("x"),
          { role: "assistant", content: null, tool_calls: [{ ...call, function: { name: "read_file", arguments: "{path:" } }] },
        ],
      },
      "invalid_value",
    ],
    [
      "tool_choice names a missing tool",
      { messages: [user("x")], tools, tool_choice: { type: "function", function: { name: "rm" } } },
      "invalid_value",
    ],
    ["required without tools", { messages: [user("x")], tool_choice: "required" }, "invalid_value"],
    [
      "a schema the server cannot use",
      {
        messages: [user("x")],
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "tuple" } } } } }],
      },
      "invalid_tool_schema",
    ],
    ["two tools with one name", { messages: [user("x")], tools: [tools[0], tools[0]] }, "invalid_value"],
    ["a non-function tool", { messages: [user("x")], tools: [{ type: "retrieval" }] }, "invalid_value"],
    ["a bad function name", { messages: [user("x")], tools: [{ type: "function", function: { name: "no spaces" } }] }, "invalid_value"],
  ];
  for (const [what, body, code] of cases) {
    const res = await fetch(`${psyche.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "psyche", ...body }),
    });
    t.equal(res.status, 400, what);
    const json = (await res.json()) as any;
    t.match(json.error, { type: "invalid_request_error", code, message: String }, `${what}: ${json.error?.message}`);
  }
  t.same(await writtenRows(psyche), before);
});

t.test("arguments that break the schema are returned with their problems, streaming or not", async (t) => {
  // The random model fills an optional number with null or a huge value more often than not.
  const add = [
    {
      type: "function" as const,
      function: { name: "add", parameters: { type: "object", properties: { a: { type: "number", maximum: 10 }, b: { type: "integer" } } } },
    },
  ];
  let found: { id: string; problems: string[]; seed: number } | undefined;
  for (let seed = 1; seed <= 10 && !found; seed++) {
    const res = (await (
      await fetch(`${psyche.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "psyche", messages: [user("add")], tools: add, tool_choice: "required", max_tokens: 200, seed }),
      })
    ).json()) as any;
    const id = res.choices[0].message.tool_calls[0].id;
    if (res.psyche.tool_call_problems) found = { id, problems: res.psyche.tool_call_problems[id], seed };
  }
  t.ok(found, "some seed breaks the schema");
  t.match(found!.problems, [/\/(a|b) must be/]);
  const stream = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "psyche",
      messages: [user("add")],
      tools: add,
      tool_choice: "required",
      max_tokens: 200,
      seed: found!.seed,
      stream: true,
    }),
  });
  const finish = (await stream.text())
    .split("\n")
    .filter((l) => l.includes('"finish_reason":"tool_calls"'))
    .map((l) => JSON.parse(l.slice(6)))[0];
  const plain = (await (
    await fetch(`${psyche.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "psyche",
        messages: [user("add")],
        tools: add,
        tool_choice: "required",
        max_tokens: 200,
        seed: found!.seed,
      }),
    })
  ).json()) as any;
  t.ok(finish.psyche?.tool_call_problems, "the stream's last chunk reports problems");
  t.same(Object.values(finish.psyche.tool_call_problems), Object.values(plain.psyche.tool_call_problems), "the same ones");
});

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// The Responses API end to end with the openai SDK's client.responses and the tiny random
// model: a response is a turn of a stored conversation; previous_response_id continues it
// (with a function call and its output between), across a restart; streaming sends OpenAI's
// event sequence and can be replayed from any point; store, delete and bad input behave.
import t from "tap";
import OpenAI from "openai";
import { zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { startPsyche, writtenRows } from "../helpers/psyche.js";
import { serverDir } from "../helpers/testdir.js";
import { until } from "../helpers/until.js";

const top = t;
const dir = serverDir(t);
let psyche = await startPsyche(t, { dataDir: dir });
let client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const readFile = {
  type: "function" as const,
  name: "read_file",
  description: "Read a file in the workspace",
  parameters: { type: "object", properties: { path: { type: "string", maxLength: 40 } }, required: ["path"], additionalProperties: false },
  strict: true,
};
/** seed is honoured by Psyche's Responses API (docs/api.md) though not in the SDK's types. */
const seed = (n: number) => ({ seed: n }) as object;
const post = (path: string, body: unknown) =>
  fetch(`${psyche.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const turnOf = (id: string) => {
  const h = id.slice(5);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

t.test("a plain response: stored as a turn, read back, its input listed", async (t) => {
  const r = await client.responses.create({ model: "psyche", input: "Hello there, how are you?", max_output_tokens: 24, ...seed(1) });
  t.match(r.id, /^resp_[0-9a-f]{32}$/);
  t.equal(r.object, "response");
  t.ok(["completed", "incomplete"].includes(r.status!), String(r.status));
  t.equal(r.output[0]!.type, "message");
  const turn = await psyche.db.pool.query("select content, conversation_id, completion_tokens, prompt_tokens from turns where id = $1", [
    turnOf(r.id),
  ]);
  t.equal(r.output_text, turn.rows[0].content, "output_text is the stored reply");
  t.equal(r.usage!.output_tokens, turn.rows[0].completion_tokens);
  t.equal(r.usage!.input_tokens, turn.rows[0].prompt_tokens);
  t.equal((r as any).psyche.conversation_id, turn.rows[0].conversation_id);
  if (r.status === "incomplete") t.same(r.incomplete_details, { reason: "max_output_tokens" });

  const again = await client.responses.retrieve(r.id);
  t.same(again.output, r.output);
  const items = await client.responses.inputItems.list(r.id);
  t.equal(items.data.length, 1);
  t.match(items.data[0], { type: "message", role: "user", content: [{ type: "input_text", text: "Hello there, how are you?" }] });
  // A response wakes the memory worker as a chat turn does.
  await until(
    "the memory job",
    async () =>
      (await psyche.db.pool.query("select 1 from pgboss.job where name = 'psyche-memory' and data->>'turnId' = $1", [turnOf(r.id)]))
        .rowCount === 1
        ? true
        : undefined,
    10_000,
  );
});

t.test("streaming: OpenAI's event sequence, numbered from 0, deltas that join into the reply", async (t) => {
  const stream = await client.responses.create({
    model: "psyche",
    input: "Tell me something",
    max_output_tokens: 16,
    ...seed(2),
    stream: true,
  });
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  t.same(
    events.map((e) => e.sequence_number),
    events.map((_, i) => i),
    "sequence numbers 0, 1, 2, ...",
  );
  const types = events.map((e) => e.type);
  t.same(types.slice(0, 4), ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
  t.same(
    types.slice(-4),
    ["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.incomplete"],
    "max_output_tokens ended it",
  );
  const text = events
    .filter((e) => e.type === "response.output_text.delta")
    .map((e) => e.delta)
    .join("");
  const final = events.at(-1).response;
  t.equal(final.output[0].content[0].text, text);
  t.equal(events.find((e) => e.type === "response.output_text.done").text, text);
  t.equal(final.status, "incomplete");

  // Replayed from any web process: the same events, the same numbers.
  const res = await fetch(`${psyche.url}/v1/responses/${final.id}?stream=true&starting_after=3`);
  const replayed = (await res.text())
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)));
  t.same(
    replayed.map((e) => [e.sequence_number, e.type]),
    events.slice(4).map((e) => [e.sequence_number, e.type]),
  );
});

t.test("the SDK's stream helper and its final response", async (t) => {
  const stream = client.responses.stream({ model: "psyche", input: "Once more", max_output_tokens: 12, ...seed(3) });
  let deltas = "";
  stream.on("response.output_text.delta", (e) => (deltas += e.delta));
  const final = await stream.finalResponse();
  t.equal(final.output_text, deltas);
});

t.test("a streamed function call: its item and argument events, then response.completed", async (t) => {
  const stream = await client.responses.create({
    model: "psyche",
    input: "Read notes.txt",
    tools: [readFile],
    tool_choice: "required",
    max_output_tokens: 200,
    ...seed(5),
    stream: true,
  });
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  const types = events.map((e) => e.type);
  t.same(types, [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.completed",
  ]);
  const final = events.at(-1).response;
  const call = final.output[0];
  t.match(call, { type: "function_call", name: "read_file", status: "completed", call_id: /^call_/ });
  t.equal(events[3].delta, call.arguments);
  t.equal(events[4].arguments, call.arguments);
  t.equal(events[2].item.id, call.id);
  t.equal(events[2].item.arguments, "", "the item opens with no arguments yet");
});

t.test("sampling controls reach the turn on this API too", async (t) => {
  const r = await client.responses.create({
    model: "psyche",
    input: "Hi",
    max_output_tokens: 4,
    ...({ presence_penalty: 0.5, frequency_penalty: 0.25, logit_bias: { "7": -100 } } as object),
  });
  const turn = await psyche.db.pool.query("select presence_penalty, frequency_penalty, logit_bias from turns where id = $1", [
    turnOf(r.id),
  ]);
  t.same(turn.rows[0], { presence_penalty: 0.5, frequency_penalty: 0.25, logit_bias: { "7": -100 } });
});

let chain: { first: string; third: string; conversation: string; callId: string };
t.test("three responses chained by previous_response_id, a function call between, one conversation", async (t) => {
  const first = await client.responses.create({
    model: "psyche",
    input: "What is in notes.txt?",
    instructions: "You are a careful assistant with a workspace.",
    tools: [readFile],
    tool_choice: { type: "function", name: "read_file" },
    max_output_tokens: 200,
    ...seed(3),
  });
  const call = first.output.find((o) => o.type === "function_call");
  if (call?.type !== "function_call") throw new Error(`no function call: ${JSON.stringify(first.output)}`);
  t.equal(call.name, "read_file");
  t.type(JSON.parse(call.arguments).path, "string");
  t.match(call.call_id, /^call_/);
  t.equal(first.status, "completed");

  const second = await client.responses.create({
    model: "psyche",
    previous_response_id: first.id,
    input: [{ type: "function_call_output", call_id: call.call_id, output: "buy milk and bread" }],
    tools: [readFile],
    max_output_tokens: 12,
    ...seed(4),
  });
  t.equal(second.previous_response_id, first.id);
  t.equal(second.output[0]!.type, "message");
  const third = await client.responses.create({
    model: "psyche",
    previous_response_id: second.id,
    input: "Thanks, and what else?",
    max_output_tokens: 12,
    ...seed(5),
  });
  const conversation = (first as any).psyche.conversation_id;
  t.equal((second as any).psyche.conversation_id, conversation);
  t.equal((third as any).psyche.conversation_id, conversation);

  // What a person reads with SQL: the whole exchange, in order, in one conversation.
  const rows = await psyche.db.pool.query(
    "select role, content, tool_calls, tool_call_id from messages where conversation_id = $1 and superseded_at is null order by position",
    [conversation],
  );
  t.same(
    rows.rows.map((r) => r.role),
    ["user", "assistant", "tool", "assistant", "user", "assistant"],
  );
  t.equal(rows.rows[1].tool_calls[0].id, call.call_id);
  t.equal(rows.rows[2].tool_call_id, call.call_id);
  t.equal(rows.rows[2].content, "buy milk and bread");
  t.equal(rows.rows[3].content, second.output_text);
  t.equal(rows.rows[5].content, third.output_text);
  // Instructions belong to the response that sent them: not a message, not carried on.
  const turns = await psyche.db.pool.query("select instructions from turns where conversation_id = $1 order by created_at", [conversation]);
  t.same(
    turns.rows.map((r) => r.instructions),
    ["You are a careful assistant with a workspace.", null, null],
  );
  t.ok(second.usage!.input_tokens > first.usage!.input_tokens, "the call and its output are in the second prompt");
  chain = { first: first.id, third: third.id, conversation, callId: call.call_id };
});

t.test("after a restart the chain continues and its responses are still there", async (t) => {
  await psyche.stop();
  // On the file's test, so that it runs until the file ends.
  psyche = await startPsyche(top, { dataDir: dir });
  client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const first = await client.responses.retrieve(chain.first);
  t.equal(first.output.find((o) => o.type === "function_call")?.type, "function_call");
  const fourth = await client.responses.create({
    model: "psyche",
    previous_response_id: chain.third,
    input: "Still there?",
    max_output_tokens: 8,
    ...seed(6),
  });
  t.equal((fourth as any).psyche.conversation_id, chain.conversation);
  const count = await psyche.db.pool.query("select count(*)::int as n from messages where conversation_id = $1 and superseded_at is null", [
    chain.conversation,
  ]);
  t.equal(count.rows[0].n, 8);
});

t.test("continuing from an earlier response branches: what followed it is superseded", async (t) => {
  const a = await client.responses.create({ model: "psyche", input: "Branch root", max_output_tokens: 6, ...seed(7) });
  const b = await client.responses.create({ model: "psyche", previous_response_id: a.id, input: "Left", max_output_tokens: 6, ...seed(7) });
  const c = await client.responses.create({
    model: "psyche",
    previous_response_id: a.id,
    input: "Right",
    max_output_tokens: 6,
    ...seed(7),
  });
  const conversation = (a as any).psyche.conversation_id;
  t.equal((c as any).psyche.conversation_id, conversation);
  const active = await psyche.db.pool.query(
    "select content from messages where conversation_id = $1 and superseded_at is null and role = 'user' order by position",
    [conversation],
  );
  t.same(
    active.rows.map((r) => r.content),
    ["Branch root", "Right"],
  );
  t.equal((await client.responses.retrieve(b.id)).id, b.id, "the superseded response can still be read");
  const res = await post("/v1/responses", { model: "psyche", previous_response_id: b.id, input: "Left again" });
  t.equal(res.status, 400);
  t.equal(((await res.json()) as any).error.code, "previous_response_superseded");
});

t.test("a whole transcript as items (as stateless clients send it) is a new conversation", async (t) => {
  const r = await client.responses.create({
    model: "psyche",
    input: [
      { role: "developer", content: "Be brief." },
      { role: "user", content: [{ type: "input_text", text: "Read notes.txt" }] },
      { type: "function_call", call_id: "call_abc", name: "read_file", arguments: '{"path":"notes.txt"}' },
      { type: "function_call_output", call_id: "call_abc", output: "buy milk" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "It says buy milk.", annotations: [] }] },
      { role: "user", content: "Thanks" },
    ],
    tools: [readFile],
    max_output_tokens: 6,
    ...seed(8),
  } as any);
  const rows = await psyche.db.pool.query("select role from messages where conversation_id = $1 order by position", [
    (r as any).psyche.conversation_id,
  ]);
  t.same(
    rows.rows.map((x) => x.role),
    ["system", "user", "assistant", "tool", "assistant", "user", "assistant"],
    "the function call joined no message before it: its own assistant message",
  );
  const items = await client.responses.inputItems.list(r.id, { order: "asc", limit: 4 });
  t.same(
    items.data.map((i) => i.type),
    ["message", "message", "function_call", "function_call_output"],
  );
  t.equal(items.has_more, true);
  const rest = await client.responses.inputItems.list(r.id, { order: "asc", after: items.data.at(-1)!.id });
  t.same(
    rest.data.map((i: any) => i.role),
    ["assistant", "user"],
  );
});

t.test("text.format: json_schema through the SDK's parse()", async (t) => {
  const Feeling = z.object({ mood: z.enum(["calm", "glad", "sad"]), note: z.string().max(20) });
  const r = await client.responses.parse({
    model: "psyche",
    input: "How do you feel?",
    text: { format: zodTextFormat(Feeling, "feeling") },
    max_output_tokens: 200,
    ...seed(1),
  });
  t.equal(r.status, "completed");
  t.ok(Feeling.safeParse(r.output_parsed).success, r.output_text);
});

t.test("store: false is not kept for reading or continuing; delete removes a stored one", async (t) => {
  const unstored = await client.responses.create({ model: "psyche", input: "Forget this", store: false, max_output_tokens: 4 });
  t.equal((unstored as any).store, false);
  t.equal((await fetch(`${psyche.url}/v1/responses/${unstored.id}`)).status, 404);
  const r = await post("/v1/responses", { model: "psyche", previous_response_id: unstored.id, input: "x" });
  t.equal(r.status, 404);
  t.equal(((await r.json()) as any).error.code, "previous_response_not_found");

  const kept = await client.responses.create({ model: "psyche", input: "Keep then delete", max_output_tokens: 4 });
  const del = await fetch(`${psyche.url}/v1/responses/${kept.id}`, { method: "DELETE" });
  t.same(await del.json(), { id: kept.id, object: "response.deleted", deleted: true });
  t.equal((await fetch(`${psyche.url}/v1/responses/${kept.id}`)).status, 404);
  t.equal((await fetch(`${psyche.url}/v1/responses/${kept.id}`, { method: "DELETE" })).status, 404);
  t.equal((await post("/v1/responses", { model: "psyche", previous_response_id: kept.id, input: "x" })).status, 404);
  const messages = await psyche.db.pool.query("select count(*)::int as n from messages where turn_id = $1", [turnOf(kept.id)]);
  t.equal(messages.rows[0].n, 2, "its messages stay in the conversation: they are memory");
});

t.test("a client that leaves mid-stream does not stop the response", async (t) => {
  const res = await post("/v1/responses", { model: "psyche", input: "Talk for a while", max_output_tokens: 64, ...seed(9), stream: true });
  const reader = res.body!.getReader();
  let seen = "";
  while (!seen.includes("response.output_text.delta")) seen += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const id = /"id":"(resp_[0-9a-f]{32})"/.exec(seen)![1]!;
  const status = await until("the response to finish", async () => {
    const s = (await client.responses.retrieve(id)).status!;
    return ["completed", "incomplete"].includes(s) ? s : undefined;
  });
  t.equal(status, "incomplete", "it ran to its max_output_tokens");
});

t.test(
  "what agents send is served: unknown fields and reasoning ignored and named, max_output_tokens clamped, any model's name answered by the one",
  async (t) => {
    const res = await post("/v1/responses", {
      model: "gpt-5-codex",
      input: "x",
      frobnicate: 1,
      client_metadata: { a: "b" },
      reasoning: { effort: "high" },
      max_output_tokens: 10_000_000,
    });
    t.equal(res.status, 200);
    t.equal(res.headers.get("x-psyche-ignored-fields"), "frobnicate, client_metadata, reasoning");
    const body = (await res.json()) as any;
    t.equal(body.model, "psyche", "the response names the model that answered");
    t.equal(
      (await psyche.db.pool.query("select max_tokens from turns where id::text = $1", [turnOf(body.id)])).rows[0].max_tokens,
      psyche.config.maxTokens,
      "clamped to --max-tokens",
    );
  },
);

t.test("bad requests: a 400 (or 404) in OpenAI's shape naming the field, nothing written", async (t) => {
  const before = await writtenRows(psyche);
  const cases: [string, Record<string, unknown>, number, string | null, string | null][] = [
    ["background", { input: "x", background: true }, 400, "background", "unsupported_parameter"],
    ["a reasoning item", { input: [{ type: "reasoning", id: "rs_1", summary: [] }] }, 400, "input[0]", "invalid_value"],
    [
      "an image part",
      { input: [{ role: "user", content: [{ type: "input_image", image_url: "http://x/y.png" }] }] },
      400,
      "input[0].content[0]",
      "invalid_value",
    ],
    ["a malformed previous_response_id", { input: "x", previous_response_id: "resp_nope" }, 400, "previous_response_id", "invalid_value"],
    [
      "an unknown previous_response_id",
      { input: "x", previous_response_id: `resp_${"0".repeat(32)}` },
      404,
      "previous_response_id",
      "previous_response_not_found",
    ],
    [
      "previous_response_id and conversation",
      { input: "x", previous_response_id: `resp_${"0".repeat(32)}`, conversation: "c1" },
      400,
      "conversation",
      "invalid_value",
    ],
    ["truncation auto", { input: "x", truncation: "auto" }, 400, "truncation", "invalid_value"],
    ["logprobs", { input: "x", include: ["message.output_text.logprobs"] }, 400, "include[0]", "invalid_value"],
    ["an unknown text format", { input: "x", text: { format: { type: "xml" } } }, 400, "text.format.type", "invalid_value"],
    [
      "a bad schema",
      { input: "x", text: { format: { type: "json_schema", name: "f", schema: { type: "tuple" } } } },
      400,
      "text.format.schema",
      "invalid_response_format",
    ],
    [
      "a bad tool schema",
      { input: "x", tools: [{ type: "function", name: "f", parameters: { type: "object", properties: { a: { type: "tuple" } } } }] },
      400,
      "tools[0].parameters",
      "invalid_tool_schema",
    ],
    [
      "a tool_choice naming no tool",
      { input: "x", tools: [readFile], tool_choice: { type: "function", name: "rm" } },
      400,
      "tool_choice",
      "invalid_value",
    ],
    [
      "an output answering no call",
      { input: [{ type: "function_call_output", call_id: "call_zzz", output: "r" }] },
      400,
      "messages",
      "invalid_tool_message",
    ],
    ["no input", { input: [] }, 400, "input", "invalid_value"],
    ["input a number", { input: 7 }, 400, "input", "invalid_value"],
  ];
  for (const [name, body, status, param, code] of cases) {
    const res = await post("/v1/responses", { model: "psyche", ...body });
    t.equal(res.status, status, `${name}: status`);
    const json = (await res.json()) as any;
    t.match(
      json,
      { error: { message: String, type: status === 404 ? /not_found_error|invalid_request_error/ : "invalid_request_error" } },
      `${name}: OpenAI's error shape`,
    );
    t.equal(json.error.param, param, `${name}: param (${json.error.message})`);
    t.equal(json.error.code, code, `${name}: code`);
  }
  for (const [path, method] of [
    ["/v1/responses/resp_x", "GET"],
    [`/v1/responses/resp_${"1".repeat(32)}`, "GET"],
    [`/v1/responses/resp_${"1".repeat(32)}/input_items`, "GET"],
    [`/v1/responses/resp_${"1".repeat(32)}`, "DELETE"],
  ] as const) {
    const res = await fetch(`${psyche.url}${path}`, { method });
    t.ok([400, 404].includes(res.status), `${method} ${path}: ${res.status}`);
    t.type(((await res.json()) as any).error.message, "string");
  }
  t.same(await writtenRows(psyche), before, "nothing was written");
});

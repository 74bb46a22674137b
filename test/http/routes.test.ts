/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw responses */
// The turn routes through Hono's app.request() (test/helpers/in-process.ts): the real database,
// queue, worker and scheduler in this process, a scripted engine in place of the model. Each API
// answers in its own shape, streams in its own events, refuses in its own error shape, and says
// where the turn is stored; errors write nothing.
import t from "tap";
import { inProcessPsyche } from "../helpers/in-process.js";
import { sseEvents } from "../helpers/sse-events.js";
import { writtenRows } from "../helpers/psyche.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";

const engine = new ScriptedEngine((request) => {
  const last = request.messages.at(-1)?.content ?? "";
  if (last.includes("weather") && request.tools?.length) return { toolCalls: [{ name: "get_weather", arguments: { city: "Lyon" } }] };
  return { text: `heard: ${last}` };
});
const psyche = await inProcessPsyche(t, { recallPromptTokens: 0 }, { engine });
const rows = () => writtenRows({ db: psyche.db } as unknown as Parameters<typeof writtenRows>[0]);
const weather = {
  type: "function",
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

t.test("chat completions: a reply whole, with where it is stored", async (t) => {
  const res = await psyche.request("/v1/chat/completions", { body: { model: "any", messages: [{ role: "user", content: "hello" }] } });
  t.equal(res.status, 200);
  const body = (await res.json()) as any;
  t.match(body, {
    object: "chat.completion",
    choices: [{ message: { role: "assistant", content: "heard: hello" }, finish_reason: "stop" }],
  });
  t.equal(body.psyche.turn_id, res.headers.get("x-psyche-turn"));
  t.equal(body.psyche.conversation_id, res.headers.get("x-psyche-conversation"));
  t.equal(body.id, `chatcmpl-${body.psyche.turn_id}`);
});

t.test("chat completions: a stream of chunks, a tool call as the openai SDK gathers it, usage, [DONE]", async (t) => {
  const res = await psyche.request("/v1/chat/completions", {
    body: {
      model: "any",
      stream: true,
      stream_options: { include_usage: true },
      tools: [weather],
      messages: [{ role: "user", content: "the weather?" }],
    },
  });
  t.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const all = await sseEvents(res);
  t.same(all[0]?.data.choices[0].delta, { role: "assistant", content: "" });
  const calls = all.filter((e) => e.data.choices?.[0]?.delta?.tool_calls);
  t.equal(calls[0]?.data.choices[0].delta.tool_calls[0].function.name, "get_weather");
  t.same(JSON.parse(calls[1]?.data.choices[0].delta.tool_calls[0].function.arguments), { city: "Lyon" });
  t.equal(all.find((e) => e.data.choices?.[0]?.finish_reason)?.data.choices[0].finish_reason, "tool_calls");
  t.ok(
    all.some((e) => e.data.usage),
    "a usage chunk",
  );
  t.equal(all.at(-1)?.data, "[DONE]");
});

t.test("messages: Anthropic's message, and its event stream", async (t) => {
  const res = await psyche.request("/v1/messages", {
    body: { model: "claude", max_tokens: 20, system: "be brief", messages: [{ role: "user", content: "hi" }] },
  });
  t.match(await res.json(), {
    type: "message",
    role: "assistant",
    content: [{ type: "text", text: "heard: hi" }],
    stop_reason: "end_turn",
  });
  const streamed = await psyche.request("/v1/messages", {
    body: { model: "claude", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] },
  });
  t.same(
    (await sseEvents(streamed)).map((e) => e.event),
    ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"],
  );
});

t.test("responses: a response, one that continues it, and its events numbered", async (t) => {
  const first = (await (await psyche.request("/v1/responses", { body: { model: "gpt", input: "hello" } })).json()) as any;
  t.match(first, { object: "response", status: "completed", output: [{ type: "message", content: [{ text: "heard: hello" }] }] });
  const next = await psyche.request("/v1/responses", {
    body: { model: "gpt", input: "again", previous_response_id: first.id, stream: true },
  });
  const all = await sseEvents(next);
  t.equal(all[0]?.event, "response.created");
  t.equal(all.at(-1)?.event, "response.completed");
  t.same(
    all.map((e) => e.data.sequence_number),
    all.map((_, i) => i),
    "numbered from 0",
  );
  t.equal(all.at(-1)?.data.response.previous_response_id, first.id);
});

t.test("a resumed stream starts after the last event read", async (t) => {
  const res = await psyche.request("/v1/chat/completions", { body: { model: "any", messages: [{ role: "user", content: "to resume" }] } });
  const turn = res.headers.get("x-psyche-turn");
  await res.json();
  const resumed = await sseEvents(await psyche.request(`/v1/turns/${turn}/events?after=1`));
  t.notOk(
    resumed.some((e) => e.data.choices?.[0]?.delta?.role),
    "no opening chunk mid-stream",
  );
  t.equal(resumed.at(-1)?.data, "[DONE]");
});

t.test("each API refuses in its own shape, having written nothing", async (t) => {
  const before = await rows();
  const openai = await psyche.request("/v1/chat/completions", { body: { model: "any", messages: [] } });
  t.equal(openai.status, 400);
  t.match(await openai.json(), { error: { type: "invalid_request_error", param: "messages" } });
  const anthropic = await psyche.request("/v1/messages", { body: { model: "claude", messages: [{ role: "user", content: "hi" }] } });
  t.equal(anthropic.status, 400);
  t.match(await anthropic.json(), { type: "error", error: { type: "invalid_request_error", message: /max_tokens/ } });
  const responses = await psyche.request("/v1/responses", { body: { model: "gpt", input: [] } });
  t.equal(responses.status, 400);
  t.match(await responses.json(), { error: { param: "input" } });
  const notJson = await psyche.request("/v1/chat/completions", { body: "{nope", headers: { "content-type": "application/json" } });
  t.equal(notJson.status, 400);
  t.match(await notJson.json(), { error: { code: "invalid_json" } });
  const badId = await psyche.request("/v1/chat/completions", {
    body: { model: "any", messages: [{ role: "user", content: "hi" }] },
    headers: { "x-psyche-conversation": "no spaces allowed" },
  });
  t.equal(badId.status, 400);
  // Postgres keeps no NUL character: refused as bad input, not failed in the store as a 500.
  const nul = await psyche.request("/v1/chat/completions", {
    body: {
      model: "any",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "a \u0000 byte" },
      ],
    },
  });
  t.equal(nul.status, 400);
  t.match(await nul.json(), { error: { type: "invalid_request_error", param: "messages[1]", message: /NUL/ } });
  const nulAnthropic = await psyche.request("/v1/messages", {
    body: { model: "claude", max_tokens: 8, messages: [{ role: "user", content: "a \u0000 byte" }] },
  });
  t.equal(nulAnthropic.status, 400);
  t.match(await nulAnthropic.json(), { type: "error", error: { type: "invalid_request_error", message: /NUL/ } });
  const nulPrompt = await psyche.request("/v1/completions", { body: { model: "any", prompt: "def f(\u0000):", max_tokens: 4 } });
  t.equal(nulPrompt.status, 400);
  t.match(await nulPrompt.json(), { error: { param: "prompt", message: /NUL/ } });
  t.same(await rows(), before, "nothing stored");
});

t.test("the memory API: a NUL character refused as bad input, naming the field, nothing stored", async (t) => {
  // Those the API stored: the chats above form memories of their own meanwhile.
  const memories = async () =>
    (await psyche.db.pool.query("select count(*)::int as n from memories where source_kind = 'api'")).rows[0].n as number;
  const before = await memories();
  const created = await psyche.request("/v1/memories", { body: { content: "a \u0000 byte" } });
  t.equal(created.status, 400);
  t.match(await created.json(), { error: { type: "invalid_request_error", param: "content", message: /NUL/ } });
  const tagged = await psyche.request("/v1/memories", { body: { content: "the kiln", tags: ["ok", "b\u0000d"] } });
  t.equal(tagged.status, 400);
  t.match(await tagged.json(), { error: { param: "tags" } });
  t.equal(await memories(), before, "nothing stored");
  // The six characters a text may quote are only text.
  const quoted = await psyche.request("/v1/memories", { body: { content: "JSON writes NUL as \\u0000" } });
  t.equal(quoted.status, 201);
  const memory = (await quoted.json()) as any;
  const fixed = await psyche.request(`/v1/memories/${memory.id}`, { method: "PATCH", body: { summary: "a \u0000 byte" } });
  t.equal(fixed.status, 400);
  t.match(await fixed.json(), { error: { param: "summary", message: /NUL/ } });
  const kept = (await (await psyche.request(`/v1/memories/${memory.id}`)).json()) as any;
  t.match(kept, { content: "JSON writes NUL as \\u0000", summary: null }, "the memory as it was");
  t.equal(await memories(), before + 1);
  // An import's line (JSON's escape, a NUL once parsed): refused by its number, the others stored.
  const imported = await psyche.request("/v1/memories/import", {
    body: ['{"content":"a \\u0000 byte"}', "the harbour wall, rebuilt in May", "raw \u0000 text"].join("\n"),
  });
  t.equal(imported.status, 200);
  t.match(await imported.json(), {
    added: 1,
    refused: [
      { line: 1, error: /NUL/ },
      { line: 3, error: /NUL/ },
    ],
  });
});

t.test("unknown fields are ignored and named; reasoning controls too", async (t) => {
  const res = await psyche.request("/v1/chat/completions", {
    body: { model: "any", messages: [{ role: "user", content: "hi" }], reasoning_effort: "low", brand_new_field: 1 },
  });
  t.equal(res.status, 200);
  // The model does not think: its thought budget is named beside the unknown field.
  t.same(res.headers.get("x-psyche-ignored-fields")?.split(", ").sort(), ["brand_new_field", "reasoning_effort"]);
  await res.json();
});

t.test("a named conversation is one conversation across APIs", async (t) => {
  const headers = { "x-psyche-conversation": "routes-test-1" };
  await (
    await psyche.request("/v1/chat/completions", { headers, body: { model: "any", messages: [{ role: "user", content: "one" }] } })
  ).json();
  await (
    await psyche.request("/v1/messages", {
      headers,
      body: { model: "claude", max_tokens: 9, messages: [{ role: "user", content: "two" }] },
    })
  ).json();
  const stored = await psyche.db.pool.query("select role, content from messages where conversation_id = $1 order by position", [
    "routes-test-1",
  ]);
  t.same(
    stored.rows.map((r) => [r.role, r.content]),
    [
      ["user", "one"],
      ["assistant", "heard: one"],
      ["user", "two"],
      ["assistant", "heard: two"],
    ],
  );
});

t.test("an unknown route is a 404 in OpenAI's shape", async (t) => {
  const res = await psyche.request("/v1/nothing-here");
  t.equal(res.status, 404);
  t.match(await res.json(), { error: { code: "unknown_url" } });
});

/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// The Anthropic Messages API through the Anthropic TypeScript SDK, unchanged, against a running
// Psyche with the tiny model: a forced tool_use and its tool_result, a stream whose text equals
// the final message, count_tokens with the model's tokenizer, Anthropic's error shape, the key
// as x-api-key, and an agent's session as one conversation (Claude Code's metadata.user_id).
import t from "tap";
import Anthropic from "@anthropic-ai/sdk";
import { startPsyche } from "../helpers/psyche.js";

const KEY = "sk-psyche-test-key";
// The mood barely moves, so that two turns with the same words read the same prompt (top_k below).
const psyche = await startPsyche(t, { recallPromptTokens: 0, apiKey: KEY, maxTokens: 256, moodSensitivity: 0.0001 });
const client = new Anthropic({ baseURL: psyche.url, apiKey: KEY, maxRetries: 0 });
const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string", maxLength: 20 } }, required: ["city"] },
};

t.test("a forced tool_use, then its tool_result answered in text", async (t) => {
  const first = await client.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 200,
    tools: [weather],
    tool_choice: { type: "tool", name: "get_weather" },
    messages: [{ role: "user", content: "Weather in Paris?" }],
  });
  t.equal(first.stop_reason, "tool_use");
  t.equal(first.model, "psyche", "the one model answered, and says so");
  t.match(first.id, /^msg_[0-9a-f]{32}$/);
  const use = first.content.find((b) => b.type === "tool_use");
  t.ok(use, JSON.stringify(first.content));
  if (use?.type !== "tool_use") return;
  t.equal(use.name, "get_weather");
  t.type((use.input as any).city, "string");
  t.ok(first.usage.input_tokens > 0 && first.usage.output_tokens > 0, "usage");

  const second = await client.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 12,
    tools: [weather],
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: first.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny, 21 C" }] },
    ],
  });
  t.ok(["end_turn", "max_tokens"].includes(second.stop_reason!), second.stop_reason!);
  t.equal(second.content[0]?.type, "text");
  const turn = (
    await psyche.db.pool.query("select conversation_id from turns where id::text = $1", [
      second.id.slice(4).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-"),
    ])
  ).rows[0];
  const roles = (
    await psyche.db.pool.query("select role, content, tool_call_id from messages where conversation_id = $1 order by position", [
      turn.conversation_id,
    ])
  ).rows;
  t.match(
    roles,
    [{ role: "user" }, { role: "assistant" }, { role: "tool", content: "sunny, 21 C", tool_call_id: use.id }, { role: "assistant" }],
    "the transcript, stored as a conversation",
  );
});

t.test("a stream: Anthropic's event sequence, and its text equals the final message", async (t) => {
  const stream = client.messages.stream({
    model: "claude-haiku-4-5",
    max_tokens: 24,
    messages: [{ role: "user", content: "Tell me a story" }],
  });
  const types: string[] = [];
  let joined = "";
  stream.on("streamEvent", (e) => types.push(e.type));
  stream.on("text", (d) => (joined += d));
  const final = await stream.finalMessage();
  t.equal(types[0], "message_start");
  t.equal(types.at(-1), "message_stop");
  t.ok(
    types.includes("content_block_start") &&
      types.includes("content_block_delta") &&
      types.includes("content_block_stop") &&
      types.includes("message_delta"),
    types.join(" "),
  );
  const text = final.content.map((b) => (b.type === "text" ? b.text : "")).join("");
  t.ok(text.length > 0);
  t.equal(joined, text, "the deltas join into the final text");
  t.equal(final.stop_reason, "max_tokens");
  t.ok(final.usage.output_tokens > 0);
});

t.test("top_k is honoured: with top_k 1 a hot sampler says what a cold one says", async (t) => {
  const ask = async (extra: { temperature: number; top_k?: number }) => {
    const reply = await client.messages.create({
      model: "claude-haiku-4-5",
      max_tokens: 16,
      messages: [{ role: "user", content: "Say something about rivers" }],
      ...extra,
    });
    return { id: reply.id, text: reply.content.map((b) => (b.type === "text" ? b.text : "")).join("") };
  };
  const cold = await ask({ temperature: 0 });
  t.ok(cold.text.length > 0);
  const greedy = [await ask({ temperature: 1, top_k: 1 }), await ask({ temperature: 1, top_k: 1 })];
  for (const g of greedy) t.equal(g.text, cold.text, "top_k 1 leaves one token to sample: the likeliest");
  const stored = await psyche.db.pool.query("select top_k from turns where id::text = $1", [
    greedy[0]!.id.slice(4).replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-"),
  ]);
  t.same(stored.rows, [{ top_k: 1 }], "stored with the turn");
  // Without top_k the same heat samples freely: the check above can fail.
  const free = [await ask({ temperature: 1 }), await ask({ temperature: 1 })];
  t.ok(
    free.some((f) => f.text !== cold.text),
    "without it, temperature 1 wanders from the likeliest reply",
  );
});

t.test("count_tokens counts with the model's tokenizer", async (t) => {
  const short = await client.messages.countTokens({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "hi" }] });
  const long = await client.messages.countTokens({
    model: "claude-sonnet-4-5",
    system: "You are a careful coding agent.",
    messages: [{ role: "user", content: "hi ".repeat(300) }],
    tools: [weather],
  });
  t.ok(short.input_tokens > 0, `${short.input_tokens}`);
  t.ok(long.input_tokens > short.input_tokens + 250, `${long.input_tokens} > ${short.input_tokens} + 250`);
});

t.test("bad requests: Anthropic's error shape and status; the key as x-api-key or Bearer", async (t) => {
  const post = (body: unknown, headers: Record<string, string> = { "x-api-key": KEY }) =>
    fetch(`${psyche.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
      body: JSON.stringify(body),
    });
  const noMax = await post({ model: "m", messages: [{ role: "user", content: "hi" }] });
  t.equal(noMax.status, 400);
  t.match(await noMax.json(), { type: "error", error: { type: "invalid_request_error", message: /max_tokens/ } });
  const image = await post({
    model: "m",
    max_tokens: 5,
    messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }] }],
  });
  t.equal(image.status, 400);
  t.match(await image.json(), {
    type: "error",
    error: { type: "invalid_request_error", message: /images and documents are not available/ },
  });
  const noKey = await post({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }, {});
  t.equal(noKey.status, 401);
  t.match(await noKey.json(), { type: "error", error: { type: "authentication_error" } });
  t.equal(
    (await post({ model: "m", max_tokens: 2, messages: [{ role: "user", content: "hi" }] }, { authorization: `Bearer ${KEY}` })).status,
    200,
    "Bearer works too",
  );
  const refused = await client.messages.create({ model: "m", max_tokens: 5, messages: [] }).catch((err: unknown) => err);
  t.ok(refused instanceof Anthropic.BadRequestError, "the SDK reads the error as its BadRequestError");
  t.match(refused, { status: 400, error: { type: "error", error: { type: "invalid_request_error" } } });
});

t.test("an agent's session is one conversation that grows by what is new; the billing stamp does not break it", async (t) => {
  const session = "0b7ed6e2-3c2d-4c8e-9f5e-6f3a9c1d2e4b";
  const metadata = { user_id: `user_0123456789abcdef_account_11111111-2222-3333-4444-555555555555_session_${session}` };
  const system = (stamp: string) => [
    { type: "text" as const, text: `x-anthropic-billing-header: cc_version=2.1.0; cc_entrypoint=cli; cch=${stamp};` },
    { type: "text" as const, text: "You are Claude Code." },
  ];
  const one = await client.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 8,
    system: system("a1b2c"),
    metadata,
    messages: [{ role: "user", content: "first" }],
  });
  await client.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 8,
    system: system("f9e8d"),
    metadata,
    messages: [
      { role: "user", content: "first" },
      { role: "assistant", content: one.content },
      { role: "user", content: "second" },
    ],
  });
  const conversation = `claude-code-${session}`;
  const stored = (
    await psyche.db.pool.query(
      "select role, content from messages where conversation_id = $1 and superseded_at is null order by position",
      [conversation],
    )
  ).rows;
  t.same(
    stored.map((m: any) => m.role),
    ["system", "user", "assistant", "user", "assistant"],
    "the resent transcript added only what was new",
  );
  t.match(stored[0].content, /cch=00000;/, "the per-request stamp is stored steady");
  t.equal(
    (
      await psyche.db.pool.query("select count(*)::int as n from messages where conversation_id = $1 and superseded_at is not null", [
        conversation,
      ])
    ).rows[0].n,
    0,
    "nothing superseded",
  );
});

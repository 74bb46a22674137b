/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// The OpenAI-compatible API end to end: the openai SDK, real HTTP on port 0, embedded
// Postgres, pg-boss, the inference worker and the tiny GGUF model.
import t from "tap";
import OpenAI from "openai";
import { startPsyche, writtenRows } from "../helpers/psyche.js";

// No recall: these tests compare replies to the same prompt, and memories formed by earlier
// turns would change the prompt (test/e2e/memory-api.test.ts covers recall).
const psyche = await startPsyche(t, { bodyLimit: 20_000, maxTokens: 512, recallPromptTokens: 0 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const user = (content: string) => ({ role: "user" as const, content });

t.test("models and health", async (t) => {
  const models = await client.models.list();
  t.same(
    models.data.map((m) => m.id),
    ["psyche", "psyche-lexical-256"],
  );
  t.equal((await client.models.retrieve("psyche")).id, "psyche");
  const missing = await fetch(`${psyche.url}/v1/models/gpt-4o`);
  t.equal(missing.status, 404);
  t.equal(((await missing.json()) as any).error.code, "model_not_found");
  const health = (await (await fetch(`${psyche.url}/health`)).json()) as any;
  t.equal(health.status, "ok");
  t.equal(health.database.ok, true);
  t.equal(health.worker.alive, true);
  t.type(health.queue.queued, "number");
});

t.test("non-streaming completion with usage; stored in Postgres", async (t) => {
  const { data, response } = await client.chat.completions
    .create({ model: "psyche", messages: [user("Hello, Psyche")], max_tokens: 24, seed: 11, temperature: 0.8 })
    .withResponse();
  t.equal(data.object, "chat.completion");
  t.equal(data.choices[0]?.message.role, "assistant");
  t.ok(data.choices[0]!.message.content!.length > 0, "some text");
  t.equal(data.choices[0]?.finish_reason, "length");
  t.equal(data.usage?.completion_tokens, 24);
  t.ok(data.usage!.prompt_tokens > 5);
  t.equal(data.usage?.total_tokens, data.usage!.prompt_tokens + 24);
  const turnId = response.headers.get("x-psyche-turn");
  const conversationId = response.headers.get("x-psyche-conversation");
  t.equal(data.id, `chatcmpl-${turnId}`);
  const stored = await psyche.db.pool.query("select role, content from messages where conversation_id = $1 order by position", [
    conversationId,
  ]);
  t.same(stored.rows, [
    { role: "user", content: "Hello, Psyche" },
    { role: "assistant", content: data.choices[0]!.message.content },
  ]);
  const turn = await psyche.db.pool.query("select status, completion_tokens from turns where id = $1", [turnId]);
  t.same(turn.rows[0], { status: "done", completion_tokens: 24 });
});

t.test("the same seed gives the same reply", async (t) => {
  const ask = () => client.chat.completions.create({ model: "psyche", messages: [user("seeded")], max_tokens: 16, seed: 5 });
  const [a, b] = [await ask(), await ask()];
  t.equal(a.choices[0]?.message.content, b.choices[0]?.message.content);
});

t.test("max_completion_tokens and stop sequences", async (t) => {
  const long = await client.chat.completions.create({ model: "psyche", messages: [user("x")], max_completion_tokens: 40, seed: 2 });
  const text = long.choices[0]!.message.content!;
  // A stop sequence taken from the model's own output (same seed, same text) must cut it there.
  const stop = text.slice(10, 13);
  const cut = await client.chat.completions.create({
    model: "psyche",
    messages: [user("x")],
    max_completion_tokens: 40,
    seed: 2,
    stop: [stop],
  });
  t.equal(cut.choices[0]?.finish_reason, "stop");
  t.equal(cut.choices[0]?.message.content, text.slice(0, text.indexOf(stop)), "the reply ends before the stop sequence");
});

t.test("streaming: chunks, finish_reason, usage, [DONE]", async (t) => {
  const stream = await client.chat.completions.create({
    model: "psyche",
    messages: [user("stream to me")],
    max_tokens: 30,
    seed: 3,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let finish: string | null | undefined;
  let usage;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    t.equal(chunk.object, "chat.completion.chunk");
    text += chunk.choices[0]?.delta.content ?? "";
    finish ??= chunk.choices[0]?.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  t.ok(chunks >= 3, "role chunk, content, finish");
  t.equal(finish, "length");
  t.equal(usage?.completion_tokens, 30);
  const nonStreamed = await client.chat.completions.create({ model: "psyche", messages: [user("stream to me")], max_tokens: 30, seed: 3 });
  t.equal(text, nonStreamed.choices[0]?.message.content, "streamed text equals the non-streamed reply");
});

t.test("a conversation continued by id sends only the new message", async (t) => {
  const id = `conv-${Date.now()}`;
  const first = await client.chat.completions.create(
    { model: "psyche", messages: [user("my name is Ada")], max_tokens: 8, seed: 1 },
    { headers: { "X-Psyche-Conversation": id } },
  );
  const second = await client.chat.completions.create(
    { model: "psyche", messages: [user("what is my name?")], max_tokens: 8, seed: 1 },
    { headers: { "X-Psyche-Conversation": id } },
  );
  t.ok(second.usage!.prompt_tokens > first.usage!.prompt_tokens + 8, "the second prompt includes the first exchange");
  // Open WebUI style: the whole transcript again, under its own header.
  await client.chat.completions.create(
    {
      model: "psyche",
      messages: [
        user("my name is Ada"),
        { role: "assistant", content: first.choices[0]!.message.content! },
        user("what is my name?"),
        { role: "assistant", content: second.choices[0]!.message.content! },
        user("and again?"),
      ],
      max_tokens: 8,
    },
    { headers: { "X-OpenWebUI-Chat-Id": id } },
  );
  // metadata.conversation_id works too
  await client.chat.completions.create({ model: "psyche", messages: [user("last one")], max_tokens: 4, metadata: { conversation_id: id } });
  const rows = await psyche.db.pool.query(
    "select role, content from messages where conversation_id = $1 and superseded_at is null order by position",
    [id],
  );
  t.same(
    rows.rows.map((r) => r.role),
    ["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"],
    "four exchanges, nothing duplicated",
  );
  t.equal(rows.rows[4].content, "and again?");
  t.equal(rows.rows[6].content, "last one");
});

t.test("requests without an id are separate conversations even with the same opening", async (t) => {
  const a = await client.chat.completions.create({ model: "psyche", messages: [user("same opening")], max_tokens: 2 }).withResponse();
  const b = await client.chat.completions.create({ model: "psyche", messages: [user("same opening")], max_tokens: 2 }).withResponse();
  t.not(a.response.headers.get("x-psyche-conversation"), b.response.headers.get("x-psyche-conversation"));
});

t.test("bad input: a 4xx in OpenAI's shape, and nothing written", async (t) => {
  const before = await writtenRows(psyche);
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${psyche.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  const cases: [string, string, number, RegExp, Record<string, string>?][] = [
    ["malformed JSON", "{not json", 400, /not valid JSON/],
    ["empty body", "", 400, /empty/],
    ["a JSON array", "[]", 400, /JSON object/],
    ["no messages", JSON.stringify({ model: "psyche" }), 400, /messages/],
    ["empty messages", JSON.stringify({ model: "psyche", messages: [] }), 400, /must not be empty/],
    ["wrong type", JSON.stringify({ model: "psyche", messages: "hi" }), 400, /messages/],
    ["unknown role", JSON.stringify({ model: "psyche", messages: [{ role: "wizard", content: "hi" }] }), 400, /role must be one of/],
    ["content of the wrong type", JSON.stringify({ model: "psyche", messages: [{ role: "user", content: 42 }] }), 400, /content/],
    [
      "an image part",
      JSON.stringify({ model: "psyche", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] }),
      400,
      /only text/,
    ],
    ["temperature out of range", JSON.stringify({ model: "psyche", messages: [user("hi")], temperature: 7 }), 400, /temperature/],
    ["n > 1", JSON.stringify({ model: "psyche", messages: [user("hi")], n: 2 }), 400, /n must be 1/],
    [
      "a tool that is not a function",
      JSON.stringify({ model: "psyche", messages: [user("hi")], tools: [{ type: "code_interpreter" }] }),
      400,
      /only function tools/,
    ],
    ["body over the limit", JSON.stringify({ model: "psyche", messages: [user("x".repeat(30_000))] }), 413, /larger than 20000 bytes/],
    [
      "bad conversation id",
      JSON.stringify({ model: "psyche", messages: [user("hi")] }),
      400,
      /conversation id/,
      { "X-Psyche-Conversation": "bad id with spaces" },
    ],
  ];
  for (const [name, body, status, message, headers] of cases) {
    const res = await post(body, headers);
    t.equal(res.status, status, `${name}: status`);
    const json = (await res.json()) as any;
    t.match(json.error?.message, message, `${name}: message`);
    t.ok("type" in json.error && "param" in json.error && "code" in json.error, `${name}: OpenAI error shape`);
  }
  t.same(await writtenRows(psyche), before, "no row written for any rejected request");

  // and through the SDK, as a client sees it
  const status = (p: Promise<unknown>) =>
    p.then(
      () => 200,
      (err: { status?: number }) => err.status,
    );
  t.equal(await status(client.chat.completions.create({ model: "psyche", messages: [] })), 400);
  // Another model's name is answered by the one model (docs/api.md, "What each field does").
  t.equal(await status(client.chat.completions.create({ model: "nope", messages: [user("hi")], max_tokens: 2 })), 200);
});

t.test("unknown routes answer in the same error shape", async (t) => {
  const res = await fetch(`${psyche.url}/v1/nothing-here`);
  t.equal(res.status, 404);
  t.match(((await res.json()) as any).error.message, /No route/);
});

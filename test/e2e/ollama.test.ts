/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw responses */
// Ollama's native API through the `ollama` library, unchanged, against a running Psyche with the
// tiny model: chat streamed and whole, generate, tools in the transcript, a format schema, embed,
// list, show, ps, version, pull refused for a registry name; Ollama's error shape; an API key's
// scope on its routes; and a chat through /api/chat remembered and recalled by a later turn on
// /v1/chat/completions (the same Psyche behind every API).
import t from "tap";
import { Ollama } from "ollama";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const ADMIN = "ollama-admin-key-1";
const ALPHA = "ollama-alpha-key-1";
const psyche = await startPsyche(t, { apiKey: ADMIN, apiKeys: `${ALPHA}=project-alpha`, maxTokens: 64, recallPromptTokens: 2000 });
const ollama = new Ollama({ host: psyche.url, headers: { Authorization: `Bearer ${ADMIN}` } });
const pool = psyche.db.pool;
const raw = (path: string, body: unknown, key = ADMIN, headers: Record<string, string> = {}) =>
  fetch(`${psyche.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

t.test("chat, whole: Ollama's closing object with the reply, timings in nanoseconds, and where it is stored", async (t) => {
  const res = await ollama.chat({
    model: "llama3.2",
    messages: [{ role: "user", content: "Say hello" }],
    options: { num_predict: 8, seed: 3 },
  });
  t.equal(res.done, true);
  t.equal(res.model, "llama3.2", "the name asked for, as Ollama answers");
  t.equal(res.message.role, "assistant");
  t.type(res.message.content, "string");
  t.ok(res.message.content.length > 0);
  t.ok(["stop", "length"].includes(res.done_reason));
  t.ok(res.prompt_eval_count > 0 && res.eval_count > 0 && res.eval_count <= 8, `eval_count ${res.eval_count}`);
  t.ok(res.total_duration >= res.eval_duration && res.eval_duration > 0, "durations");
  const turnId = (res as any).psyche.turn_id;
  const row = await pool.query("select content, max_tokens, seed from turns where id = $1", [turnId]);
  t.equal(row.rows[0].content, res.message.content, "the turn is stored as answered");
  t.equal(row.rows[0].max_tokens, 8, "num_predict is the reply's budget");
  t.equal(row.rows[0].seed, 3);
});

t.test("chat, streamed: NDJSON pieces whose text is the stored reply, done last", async (t) => {
  const parts: any[] = [];
  for await (const part of await ollama.chat({
    model: "llama3.2",
    messages: [{ role: "user", content: "Count to three" }],
    stream: true,
    options: { num_predict: 12 },
  }))
    parts.push(part);
  const last = parts.at(-1);
  t.equal(last.done, true);
  t.ok(parts.slice(0, -1).every((p) => p.done === false));
  const text = parts.map((p) => p.message.content).join("");
  const row = await pool.query("select content from turns where id = $1", [last.psyche.turn_id]);
  t.equal(text, row.rows[0].content);
  t.ok(last.eval_count > 0);
});

t.test("generate: a prompt and a system message, whole and streamed; an empty prompt loads the model", async (t) => {
  const whole = await ollama.generate({ model: "m", prompt: "Write a word", system: "Be brief", options: { num_predict: 6 } });
  t.equal(whole.done, true);
  t.ok(whole.response!.length > 0);
  const messages = await pool.query(
    "select m.role, m.content from messages m join turns t on t.conversation_id = m.conversation_id where t.id = $1 order by m.position",
    [(whole as any).psyche.turn_id],
  );
  t.same(
    messages.rows.slice(0, 2).map((m: any) => [m.role, m.content]),
    [
      ["system", "Be brief"],
      ["user", "Write a word"],
    ],
  );
  let streamed = "";
  for await (const part of await ollama.generate({ model: "m", prompt: "Another word", stream: true, options: { num_predict: 6 } }))
    streamed += part.response;
  t.ok(streamed.length > 0);
  const loaded = await ollama.generate({ model: "m", prompt: "" });
  t.equal(loaded.done_reason, "load", "an empty prompt only loads, as Ollama's");
  t.equal((await ollama.chat({ model: "m", messages: [] })).done_reason, "load");
  const before = (await pool.query("select count(*)::int as n from messages")).rows[0].n;
  const rawRes = (await ollama.generate({ model: "m", prompt: "<|im_start|>user\nhi", raw: true, options: { num_predict: 4 } })) as any;
  t.ok(rawRes.done && rawRes.response.length > 0, "a raw prompt is completed as it is");
  const turn = (await pool.query("select purpose, conversation_id from turns where id = $1", [rawRes.psyche.turn_id])).rows[0];
  t.same([turn.purpose, turn.conversation_id], ["completion", null], "in no conversation");
  t.equal((await pool.query("select count(*)::int as n from messages")).rows[0].n, before, "no message stored");
  const fim = await raw("/api/generate", { model: "m", prompt: "def f(", suffix: "return x", stream: false });
  t.equal(fim.status, 400, "a suffix for a model without fill-in-the-middle tokens");
  t.match(await fim.json(), { error: /fill-in-the-middle/ });
});

t.test("tools: offered in Ollama's shape; a transcript with calls (no ids) and tool results is one conversation", async (t) => {
  const tools = [
    {
      type: "function",
      function: {
        name: "get_weather",
        description: "Weather in a city",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    },
  ];
  const messages = [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: "", tool_calls: [{ function: { name: "get_weather", arguments: { city: "Paris" } } }] },
    { role: "tool", content: "Sunny, 21 C", tool_name: "get_weather" },
  ];
  const res = await ollama.chat({ model: "m", tools, messages, options: { num_predict: 6 } });
  t.equal(res.done, true);
  const stored = await pool.query(
    "select m.role, m.content, m.tool_calls, m.tool_call_id from messages m join turns t on t.conversation_id = m.conversation_id where t.id = $1 order by m.position",
    [(res as any).psyche.turn_id],
  );
  const [, assistant, tool] = stored.rows;
  t.equal(assistant.tool_calls[0].name, "get_weather");
  t.same(JSON.parse(assistant.tool_calls[0].arguments), { city: "Paris" }, "arguments kept as JSON text");
  t.equal(tool.tool_call_id, assistant.tool_calls[0].id, "the tool result answers the call by its name");
  const orphan = await raw("/api/chat", { model: "m", stream: false, messages: [{ role: "tool", content: "x" }] });
  t.equal(orphan.status, 400);
  t.match(await orphan.json(), { error: /tool message must answer a call/ });
});

t.test('format: a JSON schema holds the reply; "json" a JSON object', async (t) => {
  const schema = { type: "object", properties: { answer: { type: "string", maxLength: 12 } }, required: ["answer"] };
  const res = await ollama.chat({
    model: "m",
    messages: [{ role: "user", content: "Answer in JSON" }],
    format: schema,
    options: { num_predict: 48 },
  });
  const value = JSON.parse(res.message.content);
  t.type(value.answer, "string");
  // A random model's object may run past the budget; it opens as one, and is one when it ends.
  const json = await ollama.generate({ model: "m", prompt: "JSON please", format: "json", options: { num_predict: 48 } });
  t.match(json.response, /^\s*\{/);
  if (json.done_reason === "stop") t.type(JSON.parse(json.response ?? ""), "object");
});

t.test("embed, the older embeddings, list, show, ps and version", async (t) => {
  const embedded = await ollama.embed({ model: "nomic-embed-text", input: ["a red kiln", "a blue kiln"] });
  t.equal(embedded.embeddings.length, 2);
  t.ok(embedded.embeddings[0]!.length > 0);
  const older = await ollama.embeddings({ model: "nomic-embed-text", prompt: "a red kiln" });
  t.same(older.embedding, embedded.embeddings[0], "the same vector either way");
  const listed = await ollama.list();
  t.ok(listed.models.some((m) => m.name === psyche.config.modelId));
  t.equal(listed.models[0]!.details.format, "gguf");
  const shown = await ollama.show({ model: psyche.config.modelId });
  t.ok(shown.capabilities.includes("completion") && shown.capabilities.includes("tools"));
  t.ok(shown.details.family.length > 0 && shown.details.quantization_level.length > 0, JSON.stringify(shown.details));
  t.ok(shown.template.length > 0, "the GGUF's chat template");
  const embedderShown = await ollama.show({ model: listed.models[1]!.name });
  t.same(embedderShown.capabilities, ["embedding"]);
  const ps = await ollama.ps();
  t.equal(ps.models.length, 1);
  t.ok((ps.models[0] as any).context_length > 0);
  t.match((await ollama.version()).version, /^\d+\.\d+\.\d+$/);
});

t.test("pull: a GGUF at a URL is downloaded into the data directory, with Ollama's progress lines", async (t) => {
  const gguf = readFileSync(join(psyche.config.dataDir, "models", "psyche-tiny.gguf"));
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": gguf.length });
    res.end(req.method === "HEAD" ? undefined : gguf);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pulled-model.gguf`;
  const lines: any[] = [];
  for await (const line of await ollama.pull({ model: url, stream: true })) lines.push(line);
  t.equal(lines.at(-1).status, "success");
  t.ok(
    lines.some((l) => l.total === gguf.length && l.completed > 0),
    "progress with the total",
  );
  const path = lines.at(-1).path as string;
  t.ok(path.startsWith(join(psyche.config.dataDir, "models")), path);
  t.same(readFileSync(path), gguf, "the file, whole");
  t.same(await ollama.pull({ model: url }), { status: "success" }, "again, not streamed: already there");
});

t.test("a client that goes away mid-stream does not stop its turn", async (t) => {
  const controller = new AbortController();
  const res = await fetch(`${psyche.url}/api/chat`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "A long story" }], options: { num_predict: 40 } }),
    signal: controller.signal,
  });
  const turnId = res.headers.get("x-psyche-turn")!;
  const reader = res.body!.getReader();
  await reader.read();
  controller.abort();
  const status = await until("the turn's end", async () => {
    const row = (await pool.query("select status from turns where id = $1", [turnId])).rows[0];
    return row?.status === "done" ? row.status : undefined;
  });
  t.equal(status, "done", "it finished and was stored");
});

t.test("what Psyche cannot do is said in Ollama's shape", async (t) => {
  await t.rejects(ollama.pull({ model: "llama3.2" }), { name: "ResponseError", message: /registry name.*hf:/ });
  await t.rejects(ollama.create({ model: "mine", from: "llama3.2" }), { status_code: 501, message: /not available on Psyche/ } as any);
  await t.rejects(ollama.delete({ model: "mine" }), { status_code: 501 } as any);
  await t.rejects(ollama.chat({ model: "m", messages: [{ role: "user", content: "x", images: ["aGk="] }] }), {
    message: /images are not supported/,
  });
  const bad = await raw("/api/chat", { model: "m", messages: [{ role: "robot", content: "x" }] });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { error: /role must be one of/ });
  const ignored = await raw("/api/chat", {
    model: "m",
    stream: false,
    messages: [{ role: "user", content: "x" }],
    options: { num_predict: 2, mirostat: 2, num_ctx: 99 },
  });
  t.equal(ignored.status, 200);
  t.equal(ignored.headers.get("x-psyche-ignored-fields"), "options.mirostat, options.num_ctx", "options not honoured are named");
  const unknown = await fetch(`${psyche.url}/api/nothing`, { headers: { authorization: `Bearer ${ADMIN}` } });
  t.equal(unknown.status, 404);
  t.match(await unknown.json(), { error: /No route/ });
});

t.test("API keys and scopes hold on the Ollama routes", async (t) => {
  const anonymous = new Ollama({ host: psyche.url });
  await t.rejects(anonymous.list(), { status_code: 401, message: /API key/ } as any);
  const alpha = new Ollama({ host: psyche.url, headers: { Authorization: `Bearer ${ALPHA}` } });
  const res = await alpha.chat({ model: "m", messages: [{ role: "user", content: "Alpha's kiln" }], options: { num_predict: 4 } });
  const scope = await pool.query("select c.scope from conversations c join turns t on t.conversation_id = c.id where t.id = $1", [
    (res as any).psyche.turn_id,
  ]);
  t.equal(scope.rows[0].scope, "project-alpha", "a bound key's chat is in its scope");
  const other = await raw("/api/chat", { model: "m", messages: [{ role: "user", content: "x" }] }, ALPHA, {
    "x-psyche-scope": "project-beta",
  });
  t.equal(other.status, 403);
  t.match(await other.json(), { error: /bound to the scopes/ });
});

t.test("a chat through /api/chat is remembered, and recalled by a later /v1/chat/completions turn", async (t) => {
  const fact = "My ceramic studio is named Blue Heron Pottery";
  const res = await ollama.chat({ model: "m", messages: [{ role: "user", content: fact }], options: { num_predict: 4 } });
  const turnId = (res as any).psyche.turn_id;
  const memory = await until("the turn's memory", async () => {
    const rows = await pool.query("select id, access_count from memories where source_id = $1", [turnId]);
    return rows.rows[0] as { id: string; access_count: number } | undefined;
  });
  const chat = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "m",
      max_tokens: 4,
      messages: [{ role: "user", content: "What is my ceramic studio named? Blue Heron Pottery?" }],
    }),
  });
  t.equal(chat.status, 200);
  const after = await pool.query("select access_count from memories where id = $1", [memory.id]);
  t.ok(after.rows[0].access_count > memory.access_count, "recalled into the later turn's prompt");
});

t.test("a family model (tiny-qwen3: Qwen3's tokenizer and template): show says so, and the library's calls succeed", async (t) => {
  const qwen = await startPsyche(t, { model: "tiny-qwen3", maxTokens: 32, recallPromptTokens: 0 });
  const client = new Ollama({ host: qwen.url });
  const shown = await client.show({ model: "qwen3:0.6b" });
  t.equal(shown.details.family, "qwen3");
  t.ok(shown.capabilities.includes("thinking") && shown.capabilities.includes("insert"), JSON.stringify(shown.capabilities));
  t.match(shown.template, /<think>/, "Qwen3's own chat template");
  const chat = await client.chat({
    model: "qwen3:0.6b",
    messages: [{ role: "user", content: "Say hello" }],
    think: false,
    options: { num_predict: 8 },
  });
  t.equal(chat.done, true);
  t.notMatch(chat.message.content, /<think>|<\/think>/, "no thought tags in the content");
  const row = (await qwen.db.pool.query("select thought_budget from turns where id = $1", [(chat as any).psyche.turn_id])).rows[0];
  t.equal(row.thought_budget, 0, "think: false turned thinking off");
  let streamed = "";
  for await (const part of await client.generate({ model: "qwen3:0.6b", prompt: "Write", stream: true, options: { num_predict: 8 } }))
    streamed += part.response;
  t.notMatch(streamed, /<think>|<\/think>/);
  const fim = await client.generate({ model: "qwen3:0.6b", prompt: "def f(", suffix: "\n    return x\n", options: { num_predict: 4 } });
  t.equal(fim.done, true, "a suffix, filled in with Qwen's fill-in-the-middle tokens");
});

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// A context a coding agent fits in. With no --context-size, the model's own trained length (the
// tiny-agent model's 32,768 tokens, as a real model's); its tokenizer is GPT-4's, so a prompt
// counted here with js-tiktoken is the prompt Psyche counts. A 20,000-token prompt is answered;
// one past the context is refused before anything is stored, in each API's own shape (OpenAI's
// context_length_exceeded, Anthropic's "prompt is too long: N tokens > M maximum", which Claude
// Code compacts on); a reply budget larger than what the context leaves is clamped to it.
import t from "tap";
import { getEncoding } from "js-tiktoken";
import { startPsyche, writtenRows } from "../helpers/psyche.js";
import { workersContextSize } from "../../src/db/sql/workers.js";

const psyche = await startPsyche(t, { model: "tiny-agent", contextSize: undefined, recallPromptTokens: 0, maxTokens: 4096, persona: "" });
const cl100k = getEncoding("cl100k_base");

/** Prose of about `tokens` cl100k tokens, with its exact count. */
function prose(tokens: number): { text: string; tokens: number } {
  const sentence = "The worker reads the transcript again, and the dream journal keeps what the night made of it. ";
  const per = cl100k.encode(sentence).length;
  const text = sentence.repeat(Math.ceil(tokens / per));
  return { text, tokens: cl100k.encode(text).length };
}

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${psyche.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

t.test("with no --context-size, the context is the model's trained length", async (t) => {
  const rows = await psyche.db.pool.query("select context_size from inference_workers where stopped_at is null");
  t.same(rows.rows, [{ context_size: 32768 }], "the worker records its context for web processes without the model");
  t.equal(await workersContextSize(psyche.db.pool, 60), 32768);
});

t.test("a 20,000-token prompt is answered, and counted as a real model counts it", async (t) => {
  const p = prose(20000);
  const res = await post("/v1/chat/completions", { model: "gpt-4.1", messages: [{ role: "user", content: p.text }], max_tokens: 8 });
  t.equal(res.status, 200, JSON.stringify(res.body.error ?? ""));
  const used = res.body.usage?.prompt_tokens;
  t.ok(used >= p.tokens && used < p.tokens + 40, `prompt_tokens ${used} for ${p.tokens} tokens of text and the template's few`);
  const counted = await post("/v1/messages/count_tokens", { model: "claude-sonnet-4-5", messages: [{ role: "user", content: p.text }] });
  t.ok(counted.body.input_tokens >= p.tokens && counted.body.input_tokens < p.tokens + 10, `count_tokens: ${counted.body.input_tokens}`);
});

t.test("a prompt past the context is refused up front in each API's shape, and nothing is stored", async (t) => {
  const p = prose(40000);
  const before = await writtenRows(psyche);
  const chat = await post("/v1/chat/completions", { model: "psyche", messages: [{ role: "user", content: p.text }] });
  t.equal(chat.status, 400);
  t.equal(chat.body.error.code, "context_length_exceeded");
  t.equal(chat.body.error.param, "messages");
  const [, max, said] =
    /maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens/.exec(chat.body.error.message) ?? [];
  t.equal(Number(max), 32768, chat.body.error.message);
  t.ok(Number(said) >= p.tokens && Number(said) < p.tokens + 40, `N is the prompt's real count: ${said} for ${p.tokens}`);

  const message = await post("/v1/messages", {
    model: "claude-sonnet-4-5",
    max_tokens: 32000,
    system: "You are a coding agent.",
    messages: [{ role: "user", content: p.text }],
  });
  t.equal(message.status, 400);
  t.equal(message.body.type, "error");
  t.equal(message.body.error.type, "invalid_request_error");
  t.match(
    message.body.error.message,
    /^prompt is too long: \d+ tokens > 32768 maximum$/,
    "Anthropic's words, which Claude Code compacts on",
  );

  const response = await post("/v1/responses", { model: "gpt-5-codex", input: p.text });
  t.equal(response.status, 400);
  t.equal(response.body.error.code, "context_length_exceeded");

  // A stored conversation counts whole: a short new message on a long transcript is refused too.
  const half = prose(18000);
  const headers = { "content-type": "application/json", "x-psyche-conversation": "context-limit-growing" };
  const first = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: half.text }], max_tokens: 4 }),
  });
  t.equal(first.status, 200);
  const reply = ((await first.json()) as any).choices[0].message.content as string;
  const afterFirst = await writtenRows(psyche);
  // The whole transcript is resent, as agents do: the stored part and the new message count together.
  const second = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      model: "psyche",
      messages: [
        { role: "user", content: half.text },
        { role: "assistant", content: reply },
        { role: "user", content: `And again: ${half.text}` },
      ],
      max_tokens: 4,
    }),
  });
  t.equal(second.status, 400, "17,000 stored and 17,000 new do not fit 32,768");
  t.equal(((await second.json()) as any).error.code, "context_length_exceeded");
  t.same(await writtenRows(psyche), afterFirst, "the refused request wrote nothing");
  t.equal(afterFirst.turns, before.turns! + 1, "the refused ones before it wrote nothing either");
});

t.test("a reply budget larger than what the context leaves is clamped to it", async (t) => {
  const p = prose(31000);
  const res = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: p.text }], max_tokens: 4000, stream: true }),
  });
  t.equal(res.status, 200);
  const turnId = res.headers.get("x-psyche-turn")!;
  const stored = await psyche.db.pool.query("select max_tokens from turns where id = $1", [turnId]);
  const budget = stored.rows[0].max_tokens as number;
  t.ok(budget < 4000 && budget > 0, `stored reply budget ${budget}`);
  t.ok(budget <= 32768 - p.tokens, `no more than the ${32768 - p.tokens} tokens the prompt leaves`);
  // Not read to its end: the budget is the point, not thousands of random tokens.
  await fetch(`${psyche.url}/v1/turns/${turnId}/cancel`, { method: "POST" });
  await res.body?.cancel();
});

/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// OpenAI's legacy text completions (POST /v1/completions) through the `openai` SDK's
// completions.create, unchanged, against a running Psyche with the tiny model: whole and
// streamed, echo, stop, the usage; the prompt completed as it is, in no conversation and
// forming no memory; and the bad inputs, in OpenAI's error shape.
import t from "tap";
import OpenAI from "openai";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { maxTokens: 64, recallPromptTokens: 0 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "none", maxRetries: 0 });
const pool = psyche.db.pool;
const counts = async () =>
  (
    await pool.query(
      "select (select count(*)::int from conversations) as conversations, (select count(*)::int from messages) as messages, (select count(*)::int from memories) as memories",
    )
  ).rows[0];

t.test("whole: the prompt completed as it is, OpenAI's text_completion with usage; no conversation, no memory", async (t) => {
  const before = await counts();
  const res = await client.completions.create({ model: "gpt-3.5-turbo-instruct", prompt: "def fib(n):", max_tokens: 8, seed: 1 });
  t.equal(res.object, "text_completion");
  t.match(res.id, /^cmpl-/);
  t.equal(res.choices.length, 1);
  t.type(res.choices[0]!.text, "string");
  t.ok(["stop", "length"].includes(res.choices[0]!.finish_reason));
  t.ok(res.usage!.prompt_tokens > 0 && res.usage!.completion_tokens > 0 && res.usage!.completion_tokens <= 8);
  const turn = (
    await pool.query("select purpose, conversation_id, prompt, content from turns where id = $1", [(res as any).psyche.turn_id])
  ).rows[0];
  t.same([turn.purpose, turn.conversation_id, turn.prompt], ["completion", null, "def fib(n):"]);
  t.equal(turn.content, res.choices[0]!.text);
  // The memory worker is given nothing: wait past when it would have formed one.
  await new Promise((r) => setTimeout(r, 1500));
  t.same(await counts(), before, "no conversation, message or memory");
  const again = await client.completions.create({ model: "m", prompt: ["def fib(n):"], max_tokens: 8, seed: 1 });
  t.equal(again.choices[0]!.text, res.choices[0]!.text, "a one-prompt array is the prompt; the same seed, the same text");
});

t.test("streamed: chunks whose text is the stored completion, the finish reason, usage when asked, then [DONE]", async (t) => {
  const stream = await client.completions.create({
    model: "m",
    prompt: "Once upon a time",
    max_tokens: 10,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let finish: string | null = null;
  let usage: any;
  let id = "";
  for await (const chunk of stream) {
    id = chunk.id;
    for (const choice of chunk.choices) {
      text += choice.text;
      finish = choice.finish_reason ?? finish;
    }
    usage = chunk.usage ?? usage;
  }
  t.ok(finish === "stop" || finish === "length");
  t.ok(usage.completion_tokens > 0);
  const turn = (await pool.query("select content from turns where id = $1", [id.slice("cmpl-".length)])).rows[0];
  t.equal(text, turn.content);
});

t.test("echo puts the prompt before the text; stop ends it", async (t) => {
  const res = await client.completions.create({ model: "m", prompt: "Hello", max_tokens: 6, echo: true, seed: 2 });
  t.ok(res.choices[0]!.text.startsWith("Hello"));
  const stopped = await client.completions.create({ model: "m", prompt: "a b c", max_tokens: 30, stop: ["e", "o"], seed: 2 });
  t.notMatch(stopped.choices[0]!.text, /e|o/, "no stop sequence in the text");
  t.equal(stopped.choices[0]!.finish_reason, "stop");
});

t.test("bad inputs are 400s in OpenAI's shape", async (t) => {
  const bad = async (body: object, pattern: RegExp) => {
    const res = await fetch(`${psyche.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    t.equal(res.status, 400, JSON.stringify(body));
    t.match(((await res.json()) as any).error.message, pattern);
  };
  await bad({ model: "m", prompt: ["a", "b"] }, /one prompt per request/);
  await bad({ model: "m", prompt: [1, 2, 3] }, /one prompt/);
  await bad({ model: "m" }, /one prompt/);
  await bad({ model: "m", prompt: "x", n: 2 }, /n must be 1/);
  await bad({ model: "m", prompt: "x", logprobs: 3 }, /logprobs/);
  await bad({ model: "m", prompt: "x", suffix: "y" }, /fill-in-the-middle/);
});

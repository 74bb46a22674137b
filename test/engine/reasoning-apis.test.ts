/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw responses */
// A reasoning family's thought on every API, through the real engine and Qwen3's real template
// and wrapper (test/helpers/family-engine.ts), the real database, queue and worker in this
// process (test/helpers/in-process.ts): the thought comes apart from the answer (chat's
// reasoning_content, Anthropic's thinking block, a Responses reasoning item), streamed before it,
// and neither the reply's content nor a memory holds it.
import t, { type Test } from "tap";
import { inProcessPsyche } from "../helpers/in-process.js";
import { sseEvents } from "../helpers/sse-events.js";
import { familyEngine } from "../helpers/family-engine.js";
import { until } from "../helpers/until.js";

const THOUGHT = "The user greets me; I greet back.";
const engine = await familyEngine("qwen3", () => `<think>\n${THOUGHT}\n</think>\n\nHello there, friend.`);
const psyche = await inProcessPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine });
const user = (content: string) => ({ role: "user", content });

/** The turn's stored row and the memories formed from it: the thought is in neither's text. */
async function stored(t: Test, turnId: string) {
  const turn = await psyche.db.pool.query<{ content: string; reasoning: string; reasoning_tokens: number }>(
    "select content, reasoning, reasoning_tokens from turns where id = $1",
    [turnId],
  );
  t.equal(turn.rows[0]?.reasoning.trim(), THOUGHT, "the turn keeps its thought apart");
  t.notMatch(turn.rows[0]?.content, /greets|think/, "and its content without it");
  const memories = await until("the turn's memory", async () => {
    const res = await psyche.db.pool.query("select * from memories where source_id = $1", [turnId]);
    return res.rows.length ? res.rows : undefined;
  });
  t.notMatch(JSON.stringify(memories), /greets|<think>/, "no thought in memory");
  const messages = await psyche.db.pool.query("select content from messages where turn_id = $1", [turnId]);
  t.notMatch(JSON.stringify(messages.rows), /greets|<think>/, "nor in the transcript");
}

t.test("chat completions: message.reasoning_content, the content without it, reasoning tokens in usage", async (t) => {
  const res = await psyche.request("/v1/chat/completions", { body: { model: "any", messages: [user("hi there")] } });
  t.equal(res.status, 200);
  const body = (await res.json()) as any;
  const message = body.choices[0].message;
  t.equal(message.content.trim(), "Hello there, friend.");
  t.equal(message.reasoning_content.trim(), THOUGHT);
  t.ok(body.usage.completion_tokens_details.reasoning_tokens > 0);
  t.ok(body.usage.completion_tokens > body.usage.completion_tokens_details.reasoning_tokens);
  await stored(t, body.psyche.turn_id);
});

t.test("chat completions, streamed: delta.reasoning_content first, then the content", async (t) => {
  const res = await psyche.request("/v1/chat/completions", {
    body: { model: "any", stream: true, stream_options: { include_usage: true }, messages: [user("hi again")] },
  });
  const chunks = (await sseEvents(res)).filter((e) => e.data !== "[DONE]").map((e) => e.data);
  const deltas = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta));
  const thought = deltas.map((d) => d.reasoning_content ?? "").join("");
  const content = deltas.map((d) => d.content ?? "").join("");
  t.equal(thought.trim(), THOUGHT);
  t.equal(content.trim(), "Hello there, friend.");
  const firstThought = deltas.findIndex((d) => d.reasoning_content);
  const firstContent = deltas.findIndex((d) => d.content?.trim());
  t.ok(firstThought >= 0 && firstThought < firstContent, "the thought streams first");
  t.ok(chunks.at(-1).usage.completion_tokens_details.reasoning_tokens > 0);
});

t.test("Anthropic messages: a thinking block with Psyche's signature, then the text", async (t) => {
  const res = await psyche.request("/v1/messages", { body: { model: "any", max_tokens: 200, messages: [user("hello")] } });
  t.equal(res.status, 200);
  const body = (await res.json()) as any;
  t.equal(body.content[0].type, "thinking");
  t.equal(body.content[0].thinking.trim(), THOUGHT);
  t.match(body.content[0].signature, /^psyche\./);
  t.same(
    body.content.slice(1).map((b: any) => [b.type, b.text.trim()]),
    [["text", "Hello there, friend."]],
  );
});

t.test("Anthropic messages, streamed: thinking_delta, its signature, then text_delta", async (t) => {
  const res = await psyche.request("/v1/messages", { body: { model: "any", max_tokens: 200, stream: true, messages: [user("hey")] } });
  const events = await sseEvents(res);
  const starts = events.filter((e) => e.event === "content_block_start").map((e) => [e.data.index, e.data.content_block.type]);
  t.same(starts, [
    [0, "thinking"],
    [1, "text"],
  ]);
  const deltas = events.filter((e) => e.event === "content_block_delta").map((e) => e.data.delta);
  t.equal(
    deltas
      .filter((d) => d.type === "thinking_delta")
      .map((d) => d.thinking)
      .join("")
      .trim(),
    THOUGHT,
  );
  t.ok(deltas.some((d) => d.type === "signature_delta"));
  t.equal(
    deltas
      .filter((d) => d.type === "text_delta")
      .map((d) => d.text)
      .join("")
      .trim(),
    "Hello there, friend.",
  );
  t.same(
    events.filter((e) => e.event === "content_block_stop").map((e) => e.data.index),
    [0, 1],
  );
});

t.test("Responses: a reasoning item before the message, reasoning tokens in usage, streamed the same", async (t) => {
  const res = await psyche.request("/v1/responses", { body: { model: "any", input: "good morning" } });
  t.equal(res.status, 200);
  const body = (await res.json()) as any;
  t.same(
    body.output.map((o: any) => o.type),
    ["reasoning", "message"],
  );
  t.equal(body.output[0].content[0].text.trim(), THOUGHT);
  t.equal(body.output[1].content[0].text.trim(), "Hello there, friend.");
  t.ok(body.usage.output_tokens_details.reasoning_tokens > 0);

  const streamed = await sseEvents(await psyche.request("/v1/responses", { body: { model: "any", input: "good evening", stream: true } }));
  const thought = streamed
    .filter((e) => e.event === "response.reasoning_text.delta")
    .map((e) => e.data.delta)
    .join("");
  t.equal(thought.trim(), THOUGHT);
  const text = streamed.find((e) => e.event === "response.output_text.done");
  t.equal(text?.data.output_index, 1, "the message after the reasoning item");
  const completed = streamed.find((e) => e.event === "response.completed")?.data.response;
  t.same(
    completed.output.map((o: any) => o.type),
    ["reasoning", "message"],
  );
});

t.test("a client that resends the transcript with the thought is matched to what was stored", async (t) => {
  const first = (await (await psyche.request("/v1/chat/completions", { body: { model: "any", messages: [user("one")] } })).json()) as any;
  const message = first.choices[0].message;
  const conversation = first.psyche.conversation_id as string;
  const second = await psyche.request("/v1/chat/completions", {
    headers: { "x-psyche-conversation": conversation },
    body: {
      model: "any",
      messages: [user("one"), { role: "assistant", content: message.content, reasoning_content: message.reasoning_content }, user("two")],
    },
  });
  t.equal(second.status, 200);
  t.equal(second.headers.get("x-psyche-conversation"), conversation);
  await second.json();
  const stored = await psyche.db.pool.query<{ role: string }>("select role from messages where conversation_id = $1 order by position", [
    conversation,
  ]);
  t.same(
    stored.rows.map((r) => r.role),
    ["user", "assistant", "user", "assistant"],
    "the resent reply is the stored one, not a new message",
  );
});

t.test("Responses: a client that sends the reasoning item back (Codex's tool loop) is answered", async (t) => {
  const first = (await (await psyche.request("/v1/responses", { body: { model: "any", input: "ping" } })).json()) as any;
  const res = await psyche.request("/v1/responses", {
    body: { model: "any", input: [{ role: "user", content: "ping" }, ...first.output, { role: "user", content: "pong" }] },
  });
  t.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as any;
  t.equal(body.status, "completed");
  const alone = await psyche.request("/v1/responses", { body: { model: "any", input: [first.output[0]] } });
  t.equal(alone.status, 400, "reasoning alone is nothing to answer");
});

t.test("Ollama: message.thinking apart from the content, whole and streamed; generate's thinking", async (t) => {
  const res = await psyche.request("/api/chat", { body: { model: "qwen3", stream: false, think: true, messages: [user("hi ollama")] } });
  const body = (await res.json()) as any;
  t.equal(body.message.thinking.trim(), THOUGHT);
  t.equal(body.message.content.trim(), "Hello there, friend.");
  await stored(t, body.psyche.turn_id);
  const streamed = await psyche.request("/api/chat", { body: { model: "qwen3", think: true, messages: [user("hi again, ollama")] } });
  t.match(streamed.headers.get("content-type"), /application\/x-ndjson/);
  const lines = (await streamed.text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const thought = lines.map((l) => l.message.thinking ?? "").join("");
  const content = lines.map((l) => l.message.content).join("");
  t.equal(thought.trim(), THOUGHT);
  t.equal(content.trim(), "Hello there, friend.");
  t.ok(lines.findIndex((l) => l.message.thinking) < lines.findIndex((l) => l.message.content.trim()), "the thought streams first");
  t.equal(lines.at(-1).done, true);
  const generated = await psyche.request("/api/generate", { body: { model: "qwen3", stream: false, prompt: "hi, generate" } });
  const g = (await generated.json()) as any;
  t.equal(g.thinking.trim(), THOUGHT);
  t.equal(g.response.trim(), "Hello there, friend.");
});

t.test("reasoning controls set the turn's thought budget on every API, and are not named for a model that thinks", async (t) => {
  const budgetOf = async (res: Response) => {
    t.equal(res.status, 200);
    t.equal(res.headers.get("x-psyche-ignored-fields"), null, "not ignored");
    const turn = res.headers.get("x-psyche-turn");
    await res.text();
    const row = await psyche.db.pool.query<{ thought_budget: number | null }>("select thought_budget from turns where id = $1", [turn]);
    return row.rows[0]?.thought_budget;
  };
  const chat = (extra: object) => psyche.request("/v1/chat/completions", { body: { model: "any", messages: [user("hm")], ...extra } });
  t.equal(await budgetOf(await chat({ reasoning_effort: "low" })), 1024);
  t.equal(await budgetOf(await chat({ reasoning_effort: "none" })), 0, "none turns thinking off");
  t.equal(await budgetOf(await chat({ reasoning_effort: "high" })), null, "high: the family's own default");
  const messages = (thinking: object) =>
    psyche.request("/v1/messages", { body: { model: "any", max_tokens: 100, messages: [user("hm")], thinking } });
  t.equal(await budgetOf(await messages({ type: "enabled", budget_tokens: 2000 })), 2000);
  t.equal(await budgetOf(await messages({ type: "disabled" })), 0);
  t.equal(await budgetOf(await messages({ type: "adaptive" })), null);
  const responses = await psyche.request("/v1/responses", { body: { model: "any", input: "hm", reasoning: { effort: "medium" } } });
  t.equal(await budgetOf(responses), 4096);
  const ollama = (think: unknown) => psyche.request("/api/chat", { body: { model: "any", stream: false, messages: [user("hm")], think } });
  t.equal(await budgetOf(await ollama(false)), 0, "Ollama's think: false turns it off");
  t.equal(await budgetOf(await ollama(true)), null);
  t.equal(await budgetOf(await ollama("low")), 1024);

  const effortOf = async (res: Response) => {
    const turn = res.headers.get("x-psyche-turn");
    await res.text();
    const row = await psyche.db.pool.query<{ thought_effort: string | null }>("select thought_effort from turns where id = $1", [turn]);
    return row.rows[0]?.thought_effort;
  };
  // The effort a family that renders one in its prompt is told (gpt-oss's "Reasoning: low"), the nearest of its three.
  t.equal(await effortOf(await chat({ reasoning_effort: "minimal" })), "low");
  t.equal(await effortOf(await chat({ reasoning_effort: "xhigh" })), "high");
  t.equal(await effortOf(await messages({ type: "enabled", budget_tokens: 2000 })), "medium", "a budget as its nearest effort");
  t.equal(await effortOf(await messages({ type: "enabled", budget_tokens: 9000 })), "high");
  t.equal(await effortOf(await messages({ type: "adaptive" })), null, "none asked");
  t.equal(await effortOf(await ollama("high")), "high");
  t.equal(await effortOf(await chat({})), null);

  const bad = await chat({ reasoning_effort: "extreme" });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { error: { param: "reasoning_effort" } });
  const badThinking = await messages({ type: "enabled", budget_tokens: -1 });
  t.equal(badThinking.status, 400);
});

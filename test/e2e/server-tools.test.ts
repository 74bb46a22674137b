// Psyche's own memory tools (seed 001, scenarios 3-5): run inside the worker, never returned
// to the client, recorded with the turn. A scripted engine makes the model's decisions; HTTP,
// Postgres, pg-boss, the memory threads and the openai SDK are real.
import t from "tap";
import OpenAI from "openai";
import { ScriptedEngine, sinceUser } from "../helpers/scripted-engine.js";
import { startPsyche } from "../helpers/psyche.js";

const engine = new ScriptedEngine((request) => {
  const { user, after } = sinceUser(request);
  const results = after.filter((m) => m.role === "tool").map((m) => m.content);
  if (/^Remember that my favorite color is blue/.test(user)) {
    return results.length
      ? { text: "I will remember that." }
      : { toolCalls: [{ name: "store_memory", arguments: { content: "The user's favorite color is blue" } }] };
  }
  if (/favorite color\?$/.test(user)) {
    if (!results.length) return { toolCalls: [{ name: "recall_memory", arguments: { query: "favorite color" } }] };
    return { text: /blue/.test(results.join(" ")) ? "Your favorite color is blue." : "I do not know." };
  }
  if (/^Read README.md and remember the project name/.test(user)) {
    if (!results.length) return { toolCalls: [{ name: "read_file", arguments: { path: "README.md" } }] };
    if (results.length === 1)
      return { toolCalls: [{ name: "store_memory", arguments: { content: `The project is called ${/# (\w+)/.exec(results[0]!)?.[1]}` } }] };
    return { text: "I read it, and I will remember the project's name." };
  }
  if (/^loop forever/.test(user)) return { toolCalls: [{ name: "recall_memory", arguments: { query: "anything" } }] };
  if (/^bad arguments/.test(user))
    return results.length ? { text: results[0] } : { toolCalls: [{ name: "store_memory", arguments: { importance: 7 } }] };
  return { text: "ok" };
});
const psyche = await startPsyche(t, { toolIterations: 3 }, { engine });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const readFile = {
  type: "function" as const,
  function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
};
const serverCalls = async (turnId: string | null) =>
  (await psyche.db.pool.query("select server_tool_calls from turns where id = $1", [turnId])).rows[0].server_tool_calls as
    { name: string; result: string }[] | null;

t.test("scenario 3: store_memory runs inside; the client sees only the answer", async (t) => {
  const { data, response } = await client.chat.completions
    .create({ model: "psyche", messages: [{ role: "user", content: "Remember that my favorite color is blue" }], tools: [readFile] })
    .withResponse();
  t.equal(data.choices[0]!.finish_reason, "stop");
  t.equal(data.choices[0]!.message.tool_calls, undefined, "no tool call reaches the client");
  t.equal(data.choices[0]!.message.content, "I will remember that.");
  const stored = await psyche.db.pool.query("select content, source_kind, source_id from memories where source_kind = 'tool'");
  t.same(stored.rows, [
    { content: "The user's favorite color is blue", source_kind: "tool", source_id: response.headers.get("x-psyche-turn") },
  ]);
  const calls = await serverCalls(response.headers.get("x-psyche-turn"));
  t.equal(calls?.[0]?.name, "store_memory");
  t.match(calls?.[0]?.result, /"stored"/);
  t.ok(
    engine.requests.at(-2)!.tools!.some((tool) => tool.name === "recall_memory"),
    "the model is offered the memory tools beside the client's",
  );
  const turn = await psyche.db.pool.query("select conversation_id from turns where id = $1", [response.headers.get("x-psyche-turn")]);
  const conversation = turn.rows[0].conversation_id as string;
  t.same(
    engine.requests.slice(-2).map((r) => r.conversation),
    [conversation, conversation],
    "each step of the turn names its conversation (inference/llama-engine.ts keeps slots by it)",
  );
});

t.test("scenario 4: recall_memory finds it in a new conversation, streaming", async (t) => {
  const stream = await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: "What's my favorite color?" }],
    tools: [readFile],
    stream: true,
  });
  let text = "";
  let finish: string | null = null;
  for await (const chunk of stream) {
    t.notOk(chunk.choices[0]?.delta.tool_calls, "no tool_calls chunk");
    text += chunk.choices[0]?.delta.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  t.equal(text, "Your favorite color is blue.");
  t.equal(finish, "stop");
});

t.test("scenario 5: a client tool comes back; its result leads to a memory stored inside", async (t) => {
  const first = await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: "Read README.md and remember the project name" }],
    tools: [readFile],
  });
  const call = first.choices[0]!.message.tool_calls![0]!;
  t.equal(first.choices[0]!.finish_reason, "tool_calls");
  if (call.type !== "function") throw new Error("not a function call");
  t.equal(call.function.name, "read_file");
  const second = await client.chat.completions
    .create({
      model: "psyche",
      messages: [
        { role: "user", content: "Read README.md and remember the project name" },
        { role: "assistant", content: null, tool_calls: first.choices[0]!.message.tool_calls },
        { role: "tool", tool_call_id: call.id, content: "# Psyche\nA server with a memory." },
      ],
      tools: [readFile],
    })
    .withResponse();
  t.equal(second.data.choices[0]!.message.content, "I read it, and I will remember the project's name.");
  t.equal((await serverCalls(second.response.headers.get("x-psyche-turn")))?.[0]?.name, "store_memory");
  const memory = await psyche.db.pool.query("select 1 from memories where content = 'The project is called Psyche'");
  t.equal(memory.rowCount, 1);
});

t.test("server tools: the iteration limit ends a loop; bad arguments reach the model as an error", async (t) => {
  const looped = await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: "loop forever" }],
    tools: [readFile],
  });
  t.equal(looped.choices[0]!.finish_reason, "stop", "ended by the limit (3), not hung");
  t.equal(looped.choices[0]!.message.tool_calls, undefined);
  const bad = await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: "bad arguments" }],
    tools: [readFile],
  });
  t.match(bad.choices[0]!.message.content, /invalid arguments: .*content/);
  t.match(bad.choices[0]!.message.content, /importance must be <= 1/);
  // parallel_tool_calls reaches the model with the turn.
  await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: "hello" }],
    tools: [readFile],
    parallel_tool_calls: false,
  });
  t.equal(engine.requests.at(-1)!.parallelToolCalls, false);
  // A plain chat (no tools) is offered none; tool_choice none offers none either.
  await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "hello" }] });
  t.equal(engine.requests.at(-1)!.tools, undefined);
  await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: "hello" }],
    tools: [readFile],
    tool_choice: "none",
  });
  t.equal(engine.requests.at(-1)!.tools, undefined);
});

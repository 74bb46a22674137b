/* eslint-disable @typescript-eslint/no-explicit-any -- recorded JSON bodies */
// Each API's translation of a request into a turn request (src/http/chat/translate.ts,
// messages/translate.ts, responses/translate.ts), without a server, against what the real clients
// send: bodies and headers recorded from the openai and Anthropic SDKs, the AI SDK, Claude Code,
// Codex, OpenCode and Qwen Code (test/fixtures/record-requests.ts wrote test/fixtures/requests/).
import { packageRoot } from "../../src/paths.js";
import t, { type Test } from "tap";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chatRequest } from "../../src/http/chat/translate.js";
import { messagesRequest, systemText } from "../../src/http/messages/translate.js";
import { responsesRequest } from "../../src/http/responses/translate.js";
import type { TurnRequest } from "../../src/conversation/turn-request.js";
import { UserError } from "../../src/errors.js";
import { turnIdOf } from "../../src/conversation/response-ids.js";
import { chatToolRequest, toolResultRequest } from "../../src/mcp/chat-tools.js";

const weather = {
  type: "function" as const,
  function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

interface Recorded {
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}

const dir = join(packageRoot(), "test", "fixtures", "requests");
const recorded = Object.fromEntries(
  readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(dir, f), "utf8")) as Recorded[]]),
);
const client = (prefix: string) => {
  const name = Object.keys(recorded).find((k) => k.startsWith(`${prefix}-`));
  if (!name) throw new Error(`no recording of ${prefix}: run npm run record:requests`);
  return recorded[name]!;
};
const header = (r: Recorded) => (name: string) => r.headers[name];
const lenient = { strict: false, scope: "default" };
const onPath = (prefix: string, path: string) => client(prefix).filter((r) => r.path.split("?")[0] === path);

/** The text of a chat API message's content: a string, or its text parts. */
const chatText = (content: unknown) =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((p: { text?: string }) => p.text ?? "").join("") : "";

/** What a chat completions body asks, as a turn request should carry it. */
function checkChat(t: Test, r: Recorded, request: TurnRequest) {
  const b = r.body;
  t.same(
    request.messages.map((m) => [m.role, m.content]),
    b.messages.map((m: { role: string; content: unknown }) => [m.role === "developer" ? "system" : m.role, chatText(m.content)]),
    "every message, in order, with its words",
  );
  const calls = b.messages.flatMap((m: { tool_calls?: { id: string }[] }) => (m.tool_calls ?? []).map((c) => c.id));
  t.same(
    request.messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)),
    calls,
    "the assistant's calls",
  );
  t.same(
    request.messages.flatMap((m) => (m.toolCallId ? [m.toolCallId] : [])),
    b.messages.flatMap((m: { tool_call_id?: string }) => (m.tool_call_id ? [m.tool_call_id] : [])),
    "the results, each naming its call",
  );
  t.same(
    (request.tools ?? []).map((x) => x.name),
    (b.tools ?? []).map((x: { function: { name: string } }) => x.function.name),
    "the tools by name",
  );
  t.equal(request.budget.maxTokens, b.max_completion_tokens ?? b.max_tokens ?? null, "the reply's budget");
  t.equal(request.stream, b.stream ?? false);
  t.equal(request.sampling.temperature, b.temperature ?? null);
  // OpenCode names its session in a header: the requests of its loop (those offering tools) are that conversation.
  const session = r.headers["x-session-id"];
  if (session && b.tools?.length) t.same(request.conversation, { kind: "named", id: `opencode-${session}` }, "its session's conversation");
  else t.same(request.conversation, { kind: "own" }, "no id named: a conversation of its own");
  t.equal(request.model, b.model);
}

for (const name of ["openai", "ai-sdk", "opencode", "qwen-code"]) {
  t.test(`${name}: chat completions`, async (t) => {
    const requests = onPath(name, "/v1/chat/completions");
    t.ok(requests.length > 0, "recorded");
    for (const r of requests) {
      const { request, ignored, reply } = chatRequest(r.body, header(r), lenient);
      checkChat(t, r, request);
      t.same(ignored, [], "nothing it sends is ignored");
      t.equal(reply.includeUsage, r.body.stream_options?.include_usage ?? false);
    }
  });
}

t.test("openai: a forced call, and a stream that answers it", async (t) => {
  const [, forced, answered] = onPath("openai", "/v1/chat/completions");
  t.equal(chatRequest(forced!.body, header(forced!), lenient).request.toolChoice, "required");
  t.equal(chatRequest(forced!.body, header(forced!), lenient).request.budget.field, "max_completion_tokens");
  const { request, reply } = chatRequest(answered!.body, header(answered!), lenient);
  t.same(
    request.messages.map((m) => m.role),
    ["system", "user", "assistant", "tool"],
  );
  t.ok(reply.stream && reply.includeUsage);
});

t.test("OpenCode: its session's loop is the conversation, its title request one of its own", async (t) => {
  const [title, loop] = onPath("opencode", "/v1/chat/completions");
  t.ok(/^ses_/.test(loop!.headers["x-session-id"] ?? ""), "it sends its session");
  t.same(chatRequest(loop!.body, header(loop!), lenient).request.conversation, {
    kind: "named",
    id: `opencode-${loop!.headers["x-session-id"]}`,
  });
  t.equal(title!.headers["x-session-id"], loop!.headers["x-session-id"], "the title request carries the same session");
  t.same(chatRequest(title!.body, header(title!), lenient).request.conversation, { kind: "own" }, "but offers no tools");
  const other = { ...loop!, headers: { ...loop!.headers, "x-session-id": "not an opencode session" } };
  t.same(chatRequest(other.body, header(other), lenient).request.conversation, { kind: "own" }, "another header's value names nothing");
});

t.test("qwen-code and opencode: an agent's system prompt and tools, streamed with usage", async (t) => {
  for (const name of ["qwen-code", "opencode"]) {
    const r = onPath(name, "/v1/chat/completions").at(-1)!;
    const { request } = chatRequest(r.body, header(r), lenient);
    t.equal(request.messages[0]?.role, "system", `${name}: its system prompt first`);
    t.ok((request.messages[0]?.content.length ?? 0) > 1000, `${name}: the whole of it`);
    t.ok((request.tools?.length ?? 0) > 3, `${name}: its tools`);
  }
});

t.test("Claude Code: its session is the conversation, its system prompt steady, its extras named", async (t) => {
  const [r] = onPath("claude-code", "/v1/messages");
  const { request, ignored } = messagesRequest(r!.body, header(r!), lenient);
  t.same(request.conversation, { kind: "named", id: `claude-code-${r!.headers["x-claude-code-session-id"]}` });
  t.equal(request.messages[0]?.role, "system");
  t.equal(request.messages[0]?.content, systemText(r!.body.system), "the system blocks joined");
  t.same(
    (request.tools ?? []).map((x) => x.name),
    r!.body.tools.filter((x: { type?: string }) => x.type === undefined || x.type === "custom").map((x: { name: string }) => x.name),
    "its tools",
  );
  t.equal(request.budget.maxTokens, r!.body.max_tokens);
  t.equal(request.stream, true);
  for (const field of ["context_management", "output_config"]) t.ok(ignored.includes(field), `${field} ignored and named`);
  // Read: adaptive thinking leaves the family's default budget (named as ignored only where the model does not think).
  t.same(request.thinking, { budget: null, field: "thinking", effort: null }, "its thinking read");
  t.notOk(ignored.includes("thinking"));
  const user = request.messages.filter((m) => m.role === "user");
  t.ok(
    user.some((m) => m.content.includes("Say hello")),
    "the user's words",
  );
  t.throws(
    () => messagesRequest(r!.body, header(r!), { ...lenient, strict: true }),
    UserError,
    "--strict-params refuses what it does not know",
  );
});

t.test("the Anthropic SDK: system blocks, a forced tool, a tool result answered", async (t) => {
  const [plain, forced, answered] = onPath("anthropic-sdk", "/v1/messages");
  const first = messagesRequest(plain!.body, header(plain!), lenient).request;
  t.same(
    first.messages.map((m) => [m.role, m.content]),
    [
      ["system", "You are brief."],
      ["user", "Hello"],
    ],
  );
  t.same(first.conversation, { kind: "own" });
  t.equal(messagesRequest(forced!.body, header(forced!), lenient).request.toolChoice, "required", "any: a call is required");
  const { request } = messagesRequest(answered!.body, header(answered!), lenient);
  const use = answered!.body.messages[1].content.find((b: { type: string }) => b.type === "tool_use");
  t.same(
    request.messages.map((m) => m.role),
    use ? ["user", "assistant", "tool"] : ["user", "assistant"],
    "the tool_result block is a tool message",
  );
  if (use) t.equal(request.messages[2]?.toolCallId, use.id);
  t.equal(request.stream, true);
});

t.test("Codex: its session is the conversation; other tools and reasoning are ignored and named", async (t) => {
  const [r] = onPath("codex", "/v1/responses");
  const { request, ignored } = responsesRequest(r!.body, header(r!), lenient);
  t.same(request.conversation, { kind: "named", id: `codex-${r!.headers["session-id"]}` });
  const functions = r!.body.tools.filter((x: { type: string }) => x.type === "function").map((x: { name: string }) => x.name);
  t.same(
    (request.tools ?? []).map((x) => x.name),
    functions,
    "its function tools",
  );
  for (const other of r!.body.tools.filter((x: { type: string }) => x.type !== "function"))
    t.ok(
      ignored.some((f) => f.startsWith(`tools:${other.type}`)),
      `the ${other.type} tool ignored and named`,
    );
  t.equal(request.thinking, null, "reasoning read: a summary alone asks no thought budget");
  t.notOk(ignored.includes("reasoning"));
  t.equal(request.record?.items.length, r!.body.input.length, "every input item kept beside the turn");
  t.equal(request.record?.store, r!.body.store ?? true);
  t.same(
    request.messages.map((m) => m.role),
    r!.body.input.map((i: { role: string }) => (i.role === "developer" ? "system" : i.role)),
    "its developer messages as system messages, then the user's",
  );
  t.equal(request.stream, true);
});

t.test("Codex's newer models: tools sent as additional_tools items, and text.verbosity, are served and named", async (t) => {
  // The shape Codex 0.169 sends its default model (gpt-6.1-sol), cut down: its tools in the
  // input, in namespaces, and a verbosity hint with every request.
  const fn = (name: string) => ({ type: "function", name, description: "", strict: false, parameters: { type: "object", properties: {} } });
  const body = {
    model: "gpt-6.1-sol",
    stream: true,
    input: [
      {
        type: "additional_tools",
        id: "at_1",
        role: "developer",
        tools: [
          { type: "namespace", name: "functions", description: "", tools: [{ type: "custom", name: "exec" }, fn("wait")] },
          fn("sleep"),
        ],
      },
      { type: "message", role: "developer", content: [{ type: "input_text", text: "You are Codex." }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Say hello" }] },
    ],
    tools: [],
    text: { verbosity: "low" },
    reasoning: { effort: "low", context: "all_turns" },
    client_metadata: { session_id: "s" },
  };
  const { request, ignored } = responsesRequest(body, () => undefined, lenient);
  t.same(
    request.messages.map((m) => [m.role, m.content]),
    [
      ["system", "You are Codex."],
      ["user", "Say hello"],
    ],
  );
  t.same(
    (request.tools ?? []).map((x) => x.name),
    ["sleep"],
    "a function among them joins the request's tools",
  );
  for (const named of ["input:additional_tools", "tools:namespace:functions", "text.verbosity", "client_metadata"])
    t.ok(ignored.includes(named), `${named} named as ignored`);
  const { client_metadata: _, ...known } = body;
  t.throws(
    () => responsesRequest(known, () => undefined, { ...lenient, strict: true }),
    /additional_tools/,
    "refused under --strict-params",
  );
});

t.test("openai: responses, and one continuing another", async (t) => {
  const [first, next] = onPath("openai", "/v1/responses");
  const a = responsesRequest(first!.body, header(first!), lenient).request;
  t.equal(a.instructions, "Be brief.");
  t.same(
    a.messages.map((m) => [m.role, m.content]),
    [["user", "Hello"]],
  );
  t.same(a.budget, { maxTokens: 16, field: "max_output_tokens" });
  const b = responsesRequest(next!.body, header(next!), lenient).request;
  t.same(b.conversation, { kind: "after", turnId: turnIdOf(next!.body.previous_response_id) }, "right after the turn it names");
  t.same(
    (b.tools ?? []).map((x) => x.name),
    ["get_weather"],
  );
});

t.test("a translation refuses what cannot be honoured, naming the field", async (t) => {
  const [r] = onPath("openai", "/v1/chat/completions");
  const refuse = (body: Record<string, unknown>, param: string) => {
    try {
      chatRequest(body, header(r!), lenient);
      t.fail(`${param} accepted`);
    } catch (err) {
      t.match(err, { status: 400, param }, param);
    }
  };
  refuse({ ...r!.body, n: 2 }, "n");
  refuse({ ...r!.body, audio: { voice: "alloy" } }, "audio");
  refuse({ ...r!.body, messages: [] }, "messages");
  t.throws(() => chatRequest(r!.body, () => "not a valid id!", lenient), /Invalid conversation id/, "a bad conversation header");
});

t.test("MCP: chat and add_tool_result as turn requests", async (t) => {
  const chat = chatToolRequest(
    { message: "hello", conversation_id: "conv-1", max_tokens: 9, temperature: 0.5, tools: [weather], tool_choice: "auto" },
    "notes",
    "psyche",
  );
  t.match(chat, {
    messages: [{ role: "user", content: "hello" }],
    conversation: { kind: "named", id: "conv-1" },
    scope: "notes",
    budget: { maxTokens: 9, field: "max_tokens" },
    sampling: { temperature: 0.5 },
    toolChoice: "auto",
  });
  t.same(
    chat.tools?.map((x) => x.name),
    ["get_weather"],
  );
  t.same(chatToolRequest({ message: "hi" }, "default", "psyche").conversation, { kind: "own" }, "no id: a conversation of its own");
  const result = toolResultRequest({ conversation_id: "conv-1", tool_call_id: "call_1", result: "clear" }, "notes", "psyche");
  t.same(result.conversation, { kind: "tool-result", id: "conv-1" });
  t.same(result.messages, [{ role: "tool", content: "clear", toolCallId: "call_1" }]);
});

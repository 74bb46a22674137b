// The TypeScript client libraries people point at an OpenAI-compatible server, unchanged,
// against a running Psyche with the tiny random model: the Vercel AI SDK (through
// @ai-sdk/openai-compatible), LangChain.js and the OpenAI Agents SDK (over the Responses API).
// Schemas are bounded (enums, maxLength) so that a random model's JSON ends; tool choices are
// forced where a test needs a call, since a random model would rarely choose one.
import t from "tap";
import OpenAI from "openai";
import { z } from "zod";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateObject, generateText, stepCountIs, streamText, tool as aiTool } from "ai";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool as agentTool } from "@openai/agents";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, {});
const baseURL = `${psyche.url}/v1`;
const Feeling = z.object({ mood: z.enum(["calm", "glad", "sad"]), note: z.string().max(20) });
const feelingJsonSchema = {
  type: "object",
  properties: { mood: { type: "string", enum: ["calm", "glad", "sad"] }, note: { type: "string", maxLength: 20 } },
  required: ["mood", "note"],
  additionalProperties: false,
};
const PathArgs = z.object({ path: z.string().max(30) });
/** The form the latest turn was held to: proof that the library sent a schema, not only a prompt. */
const lastFormat = async () =>
  (await psyche.db.pool.query("select response_format from turns order by created_at desc limit 1")).rows[0].response_format;
const turnsOf = async (conversation: string) =>
  (
    await psyche.db.pool.query("select role from messages where conversation_id = $1 and superseded_at is null order by position", [
      conversation,
    ])
  ).rows.map((r) => r.role);

t.test("Vercel AI SDK through @ai-sdk/openai-compatible", async (t) => {
  const provider = createOpenAICompatible({
    name: "psyche",
    baseURL,
    apiKey: "unused",
    supportsStructuredOutputs: true,
    includeUsage: true,
  });
  const model = provider.chatModel("psyche");

  const text = await generateText({ model, prompt: "Say hello", maxOutputTokens: 12, seed: 1, maxRetries: 0 });
  t.equal(text.finishReason, "length");
  t.ok(text.text.length > 0);
  t.ok(text.usage.outputTokens! > 0, "usage came through");

  const streamed = streamText({ model, prompt: "Say more", maxOutputTokens: 12, seed: 2, maxRetries: 0 });
  let joined = "";
  for await (const part of streamed.textStream) joined += part;
  t.equal(joined, await streamed.text);
  t.ok(joined.length > 0);
  t.ok((await streamed.usage).outputTokens! > 0, "the stream's usage chunk came through");

  const object = await generateObject({ model, schema: Feeling, prompt: "How do you feel?", maxOutputTokens: 200, seed: 3, maxRetries: 0 });
  t.ok(Feeling.safeParse(object.object).success, JSON.stringify(object.object));
  t.match(await lastFormat(), { type: "json_schema", schema: { properties: { mood: { enum: ["calm", "glad", "sad"] } } } });

  // A tool loop: the first step must call the tool, the second answers in text.
  const read: string[] = [];
  const loop = await generateText({
    model,
    prompt: "What is in notes.txt?",
    tools: {
      read_file: aiTool({
        description: "Read a file",
        inputSchema: PathArgs,
        execute: async ({ path }) => {
          read.push(path);
          return "buy milk";
        },
      }),
    },
    prepareStep: ({ stepNumber }) => ({
      toolChoice: stepNumber === 0 ? { type: "tool" as const, toolName: "read_file" as const } : ("none" as const),
    }),
    stopWhen: stepCountIs(3),
    maxOutputTokens: 60,
    seed: 4,
    maxRetries: 0,
  });
  t.equal(read.length, 1, "the tool ran once, on this side");
  t.equal(loop.steps.length, 2);
  t.equal(loop.steps[0]!.toolCalls[0]!.toolName, "read_file");
  t.same(
    loop.steps[0]!.toolResults.map((r) => r.output),
    ["buy milk"],
  );
  t.ok(["stop", "length"].includes(loop.finishReason), loop.finishReason);
});

t.test("LangChain.js: bindTools and withStructuredOutput", async (t) => {
  const chat = new ChatOpenAI({ model: "psyche", apiKey: "unused", configuration: { baseURL }, maxTokens: 200, maxRetries: 0 });
  const plain = await chat.invoke("Say hello", { stop: undefined });
  t.type(plain.content, "string");

  const withTools = chat.bindTools(
    [
      {
        type: "function",
        function: {
          name: "read_file",
          description: "Read a file",
          parameters: { type: "object", properties: { path: { type: "string", maxLength: 30 } }, required: ["path"] },
        },
      },
    ],
    {
      tool_choice: { type: "function", function: { name: "read_file" } },
    },
  );
  const called = await withTools.invoke("What is in notes.txt?");
  t.equal(called.tool_calls?.length, 1);
  t.equal(called.tool_calls![0]!.name, "read_file");
  t.type(called.tool_calls![0]!.args.path, "string");

  const structured = chat.withStructuredOutput(feelingJsonSchema, { name: "feeling", method: "jsonSchema" });
  const value = await structured.invoke("How do you feel?");
  t.ok(Feeling.safeParse(value).success, JSON.stringify(value));
  t.match(await lastFormat(), { type: "json_schema", name: "feeling" });

  // A zod schema, as most users pass one: LangChain.js 1.x sends zod 4's JSON Schema, which
  // names draft 2020-12 in its $schema.
  const zodStructured = chat.withStructuredOutput(Feeling, { name: "feeling_zod" });
  const parsed = await zodStructured.invoke("And how do you feel now?");
  t.ok(Feeling.safeParse(parsed).success, JSON.stringify(parsed));
  t.match(
    await lastFormat(),
    { type: "json_schema", name: "feeling_zod", schema: { $schema: "https://json-schema.org/draft/2020-12/schema" } },
    "a 2020-12 schema, accepted and held",
  );
});

t.test("OpenAI Agents SDK over the Responses API: a local function tool, then structured output", async (t) => {
  setTracingDisabled(true);
  const model = new OpenAIResponsesModel(new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 }), "psyche");
  const read: string[] = [];
  const readFile = agentTool({
    name: "read_file",
    description: "Read a file in the workspace",
    parameters: PathArgs,
    execute: async ({ path }) => {
      read.push(path);
      return "buy milk";
    },
  });
  // The forced choice is reset after the call (resetToolChoice), so the second turn answers.
  const agent = new Agent({
    name: "helper",
    instructions: "You help with files.",
    model,
    tools: [readFile],
    modelSettings: { toolChoice: "read_file", maxTokens: 60 },
  });
  const result = await run(agent, "What is in notes.txt?", { maxTurns: 4 });
  t.equal(read.length, 1, "the tool ran once, in this process");
  t.type(result.finalOutput, "string");
  const responses = result.rawResponses.map((r) => r.responseId!);
  t.equal(responses.length, 2);
  // The SDK sends the whole transcript each time: Psyche stores each as its conversation.
  const second = await psyche.db.pool.query(
    "select conversation_id, instructions from turns t join responses r on r.turn_id = t.id order by t.created_at desc limit 1",
  );
  t.equal(second.rows[0].instructions, "You help with files.");
  t.same(await turnsOf(second.rows[0].conversation_id), ["user", "assistant", "tool", "assistant"]);

  // Chained by previous_response_id instead: one conversation across the runs.
  const chained = await run(agent, "And now?", { previousResponseId: responses[1]!, maxTurns: 4 });
  t.ok(chained.lastResponseId);
  const conv = await psyche.db.pool.query("select conversation_id from turns where id::text = $1", [toUuid(chained.lastResponseId!)]);
  t.equal(conv.rows[0].conversation_id, second.rows[0].conversation_id);

  const typed = new Agent({
    name: "feeler",
    instructions: "Say how you feel.",
    model,
    outputType: Feeling,
    modelSettings: { maxTokens: 200 },
  });
  const feeling = await run(typed, "How do you feel?");
  t.ok(Feeling.safeParse(feeling.finalOutput).success, JSON.stringify(feeling.finalOutput));
  t.match(await lastFormat(), { type: "json_schema", schema: { properties: { note: { maxLength: 20 } } } });
});

function toUuid(responseId: string): string {
  const h = responseId.slice("resp_".length);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// The libraries that speak Ollama's own API, unchanged, against a running Psyche with the tiny
// model: the Vercel AI SDK through ollama-ai-provider-v2 (the AI SDK 6 line that runs on Node
// 20) and LangChain's @langchain/ollama. Each turn is Psyche's: stored, and answered whole or
// streamed. Schemas are bounded so that a random model's JSON ends.
import t from "tap";
import { z } from "zod";
import { generateObject, generateText, streamText, embed } from "ai";
import { createOllama } from "ollama-ai-provider-v2";
import { ChatOllama, OllamaEmbeddings } from "@langchain/ollama";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { maxTokens: 64 });
const turns = async () => (await psyche.db.pool.query("select count(*)::int as n from turns where status = 'done'")).rows[0].n as number;
const lastTurn = async () =>
  (await psyche.db.pool.query("select content, response_format, max_tokens from turns order by created_at desc limit 1")).rows[0];
const Feeling = z.object({ mood: z.enum(["calm", "glad", "sad"]), note: z.string().max(20) });

t.test("AI SDK through ollama-ai-provider-v2: generateText, streamText, generateObject, embed", async (t) => {
  const ollama = createOllama({ baseURL: `${psyche.url}/api` });
  const before = await turns();
  const text = await generateText({ model: ollama("llama3.2"), prompt: "Say hello", maxOutputTokens: 8 });
  t.ok(text.text.length > 0);
  t.equal((await lastTurn()).content, text.text, "the turn is Psyche's, as answered");
  const streamed = streamText({ model: ollama("llama3.2"), prompt: "Count to three", maxOutputTokens: 8 });
  let joined = "";
  for await (const part of streamed.textStream) joined += part;
  t.equal(joined, (await lastTurn()).content, "the streamed text is the stored reply");
  const object = await generateObject({ model: ollama("llama3.2"), schema: Feeling, prompt: "How do you feel?", maxOutputTokens: 60 });
  t.ok(["calm", "glad", "sad"].includes(object.object.mood));
  t.equal((await lastTurn()).response_format.type, "json_schema", "held to the schema by Ollama's format");
  t.equal(await turns(), before + 3);
  const vector = await embed({ model: ollama.textEmbeddingModel("nomic-embed-text"), value: "a red kiln" });
  t.ok(vector.embedding.length > 0);
});

t.test("LangChain's ChatOllama: invoke, stream, structured output; OllamaEmbeddings", async (t) => {
  const chat = new ChatOllama({ baseUrl: psyche.url, model: "llama3.2", numPredict: 8 });
  const reply = await chat.invoke("Say hello");
  t.equal((await lastTurn()).content, reply.content);
  t.equal((await lastTurn()).max_tokens, 8, "numPredict is the reply's budget");
  let streamed = "";
  for await (const chunk of await chat.stream("Count to three")) streamed += chunk.content as string;
  t.equal(streamed, (await lastTurn()).content);
  const structured = new ChatOllama({ baseUrl: psyche.url, model: "llama3.2", numPredict: 60 }).withStructuredOutput(Feeling, {
    method: "jsonSchema",
  });
  const feeling = await structured.invoke("How do you feel?");
  t.ok(["calm", "glad", "sad"].includes(feeling.mood));
  const vectors = await new OllamaEmbeddings({ baseUrl: psyche.url, model: "nomic-embed-text" }).embedDocuments(["a", "b"]);
  t.equal(vectors.length, 2);
});

// The benchmark's streaming client, in its own thread: a real client has its own event loop,
// so its parsing must not slow the server it measures (nor the other way round).
import { parentPort, workerData } from "node:worker_threads";
import OpenAI from "openai";
import { z } from "zod";

const RequestSchema = z.object({ question: z.string(), maxTokens: z.number().int().positive() });
const client = new OpenAI({ baseURL: z.string().parse(workerData.baseURL), apiKey: "bench", maxRetries: 0 });

parentPort!.on("message", async (message: unknown) => {
  const { question, maxTokens } = RequestSchema.parse(message);
  const start = performance.now();
  let firstAt = 0;
  let lastAt = 0;
  let tokens = 0;
  const stream = await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: question }],
    max_tokens: maxTokens,
    seed: 1,
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta.content) {
      lastAt = performance.now();
      if (!firstAt) firstAt = lastAt;
    }
    if (chunk.usage) tokens = chunk.usage.completion_tokens;
  }
  parentPort!.postMessage({ ttftMs: firstAt - start, firstAt: firstAt - start, lastAt: lastAt - start, tokens });
});

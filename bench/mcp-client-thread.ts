// The MCP benchmark's client, in its own thread: a hook script's single POST of
// assemble_context to /mcp, timed from the request to the parsed reply.
import { parentPort, workerData } from "node:worker_threads";
import { z } from "zod";

const RequestSchema = z.object({ query: z.string(), maxTokens: z.number().int().positive() });
const url = z.string().parse(workerData.url);
let id = 0;

parentPort!.on("message", async (message: unknown) => {
  const { query, maxTokens } = RequestSchema.parse(message);
  const start = performance.now();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: ++id,
      method: "tools/call",
      params: { name: "assemble_context", arguments: { query, max_tokens: maxTokens } },
    }),
  });
  const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: { markdown: string; memory_ids: string[] } } };
  const ms = performance.now() - start;
  const out = body.result?.structuredContent;
  if (!res.ok || body.result?.isError || !out)
    throw new Error(`assemble_context failed: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  parentPort!.postMessage({ ms, memories: out.memory_ids.length, chars: out.markdown.length });
});

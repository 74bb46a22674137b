// POST /v1/embeddings in OpenAI's shape, with the configured embedder.
import { Hono } from "hono";
import { words } from "../../memory/analyzer.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { readJsonObject } from "../read-json.js";
import { EmbeddingsRequestSchema } from "../schemas/memory.js";

const MAX_INPUT_CHARS = 100_000;

function base64(vector: readonly number[]): string {
  return Buffer.from(Float32Array.from(vector).buffer).toString("base64");
}

export function embeddingRoutes(deps: WebServices): Hono {
  const app = new Hono();
  app.post("/v1/embeddings", async (c) => {
    const parsed = EmbeddingsRequestSchema.safeParse(await readJsonObject(c));
    if (!parsed.success) throw fromZodError(parsed.error);
    const body = parsed.data;
    const served = [deps.embedder.id, deps.modelId];
    if (!served.includes(body.model)) {
      throw new ApiError(
        404,
        "invalid_request_error",
        `The model '${body.model}' does not exist: embeddings here come from '${deps.embedder.id}' (or use '${deps.modelId}')`,
        {
          param: "model",
          code: "model_not_found",
        },
      );
    }
    if (body.dimensions !== undefined && body.dimensions !== deps.embedder.dimensions) {
      throw invalidRequest(
        `${deps.embedder.id} makes ${deps.embedder.dimensions}-dimensional vectors; it cannot give ${body.dimensions}`,
        "dimensions",
        "invalid_value",
      );
    }
    const inputs = typeof body.input === "string" ? [body.input] : body.input;
    inputs.forEach((text, i) => {
      if (text.length > MAX_INPUT_CHARS)
        throw invalidRequest(`input[${i}] is longer than ${MAX_INPUT_CHARS} characters`, "input", "invalid_value");
    });
    const vectors = await deps.embedder.embed(inputs, c.req.raw.signal);
    // Usage counts words: the built-in embedder has no tokens, and for a GGUF model this is close.
    const tokens = inputs.reduce((n, text) => n + words(text).length, 0);
    return c.json({
      object: "list",
      data: vectors.map((v, index) => ({ object: "embedding", index, embedding: body.encoding_format === "base64" ? base64(v) : v })),
      model: deps.embedder.id,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });
  return app;
}

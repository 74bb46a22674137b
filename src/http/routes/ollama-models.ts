// Ollama's model and embedding routes: GET /api/tags, POST /api/show, GET /api/ps,
// GET /api/version, POST /api/embed and /api/embeddings, POST /api/pull, and a clear refusal for
// what Ollama has and Psyche cannot do. One model serves every name, as on /v1/chat/completions,
// unless --strict-params; the embedder is listed beside it (docs/api.md, "Ollama's API").
import { createHash } from "node:crypto";
import { Hono, type Context } from "hono";
import { stream } from "hono/streaming";
import type { z } from "zod";
import { fromZodError, invalidRequest } from "../../errors.js";
import type { ModelDescription } from "../../inference/engine.js";
import { words } from "../../memory/analyzer.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { readJsonObject } from "../read-json.js";
import {
  OllamaEmbeddingsRequestSchema,
  OllamaEmbedRequestSchema,
  OllamaPullRequestSchema,
  OllamaShowRequestSchema,
} from "../schemas/ollama.js";
import { ndjsonHeaders } from "../ollama/stream.js";

/** The Ollama API version Psyche speaks: clients gate features (structured outputs, thinking) on it. */
export const OLLAMA_API_VERSION = "0.12.0";

const STARTED = new Date().toISOString();
/** Loaded "for ever": the model stays until the server stops. */
const EXPIRES = "2999-01-01T00:00:00Z";
const digest = (text: string) => createHash("sha256").update(text).digest("hex");

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw fromZodError(parsed.error);
  return parsed.data;
}

export function ollamaModelRoutes(deps: WebServices): Hono {
  const app = new Hono();
  const describe = async () => (await deps.describeModel?.()) ?? undefined;
  const details = (d: ModelDescription | undefined) => ({
    parent_model: "",
    format: "gguf",
    family: d?.architecture ?? "unknown",
    families: d ? [d.architecture] : [],
    parameter_size: d?.parameterSize ?? "unknown",
    quantization_level: d?.quantization ?? "unknown",
  });
  const embedderDetails = {
    parent_model: "",
    format: "gguf",
    family: "embedding",
    families: ["embedding"],
    parameter_size: "",
    quantization_level: "",
  };
  const isEmbedder = (name: string) => name === deps.embedder.id || name === `${deps.embedder.id}:latest`;
  /** The model a request names: the embedder by its id, else the one chat model (any name, unless --strict-params). */
  const check = (name: string) => {
    if (isEmbedder(name)) return "embedder" as const;
    if (deps.strictParams && name !== deps.modelId && name !== `${deps.modelId}:latest`)
      throw new ApiError(
        404,
        "not_found_error",
        `model '${name}' not found: this server serves '${deps.modelId}' and '${deps.embedder.id}'`,
      );
    return "chat" as const;
  };
  const listed = async () => {
    const d = await describe();
    return [
      {
        name: deps.modelId,
        model: deps.modelId,
        modified_at: STARTED,
        size: d?.bytes ?? 0,
        digest: digest(`${deps.modelId}:${d?.bytes ?? 0}`),
        details: details(d),
      },
      {
        name: deps.embedder.id,
        model: deps.embedder.id,
        modified_at: STARTED,
        size: 0,
        digest: digest(deps.embedder.id),
        details: embedderDetails,
      },
    ];
  };

  app.get("/api/version", (c) => c.json({ version: OLLAMA_API_VERSION }));
  app.get("/api/tags", async (c) => c.json({ models: await listed() }));
  app.get("/api/ps", async (c) => {
    const d = await describe();
    const [chat] = await listed();
    return c.json({ models: [{ ...chat, expires_at: EXPIRES, size_vram: 0, context_length: d?.contextLength ?? 0 }] });
  });
  app.post("/api/show", async (c) => {
    const body = parseBody(OllamaShowRequestSchema, await readJsonObject(c));
    const name = (body.model ?? body.name)!;
    if (check(name) === "embedder")
      return c.json({
        license: "",
        modelfile: "",
        parameters: "",
        template: "",
        details: embedderDetails,
        model_info: { "general.architecture": "embedding", "embedding.embedding_length": deps.embedder.dimensions },
        capabilities: ["embedding"],
        modified_at: STARTED,
      });
    const d = await describe();
    const capabilities = ["completion", "tools", ...(d?.thinks ? ["thinking"] : []), ...(d?.fillInMiddle ? ["insert"] : [])];
    return c.json({
      license: "",
      modelfile: `# Served by Psyche: the model is set with psyche serve --model\nFROM ${deps.modelId}\n`,
      parameters: d ? `num_ctx ${d.contextLength}` : "",
      template: d?.template ?? "",
      system: deps.persona ?? "",
      details: details(d),
      model_info: { ...(d?.info ?? {}), ...(d ? { [`${d.architecture}.context_length`]: d.contextLength } : {}) },
      capabilities,
      modified_at: STARTED,
    });
  });

  const embed = async (c: Context, name: string, inputs: string[], dimensions: number | null | undefined) => {
    check(name);
    if (dimensions != null && dimensions !== deps.embedder.dimensions)
      throw invalidRequest(
        `${deps.embedder.id} makes ${deps.embedder.dimensions}-dimensional vectors; it cannot give ${dimensions}`,
        "dimensions",
      );
    const started = performance.now();
    const vectors = await deps.embedder.embed(inputs, c.req.raw.signal);
    return { vectors, ns: Math.round((performance.now() - started) * 1e6), tokens: inputs.reduce((n, t) => n + words(t).length, 0) };
  };
  app.post("/api/embed", async (c) => {
    const body = parseBody(OllamaEmbedRequestSchema, await readJsonObject(c));
    const { vectors, ns, tokens } = await embed(c, body.model, typeof body.input === "string" ? [body.input] : body.input, body.dimensions);
    return c.json({ model: body.model, embeddings: vectors, total_duration: ns, load_duration: 0, prompt_eval_count: tokens });
  });
  // The older form: one prompt, one vector.
  app.post("/api/embeddings", async (c) => {
    const body = parseBody(OllamaEmbeddingsRequestSchema, await readJsonObject(c));
    const { vectors } = await embed(c, body.model, [body.prompt], null);
    return c.json({ embedding: vectors[0] });
  });

  app.post("/api/pull", async (c) => {
    const body = parseBody(OllamaPullRequestSchema, await readJsonObject(c));
    const spec = (body.model ?? body.name)!;
    if (!/^(hf:|https?:\/\/)/.test(spec))
      throw invalidRequest(
        `'${spec}' is an Ollama registry name, and Psyche does not pull from Ollama's registry: give an hf: URI ` +
          `(hf:<user>/<repo>/<file>.gguf) or an https:// URL of a GGUF file, then start Psyche with --model set to it`,
        "model",
      );
    if (!deps.pullModel)
      throw new ApiError(501, "server_error", "this process cannot download models: pull on the process that runs psyche serve");
    const pull = deps.pullModel;
    const status = (s: Record<string, unknown>) => `${JSON.stringify(s)}\n`;
    if (body.stream === false) {
      await pull(spec, () => undefined, c.req.raw.signal);
      return c.json({ status: "success" });
    }
    ndjsonHeaders(c);
    return stream(c, async (s) => {
      const signal = new AbortController();
      s.onAbort(() => signal.abort());
      await s.write(status({ status: "pulling manifest" }));
      try {
        let last = 0;
        const path = await pull(
          spec,
          (p) => {
            // Progress at most ten times a second: a line per chunk would be thousands.
            if (performance.now() - last < 100 && p.completed < p.total) return;
            last = performance.now();
            void s.write(status({ status: `pulling ${spec}`, digest: `sha256:${digest(spec)}`, total: p.total, completed: p.completed }));
          },
          signal.signal,
        );
        await s.write(status({ status: "verifying sha256 digest" }));
        await s.write(status({ status: "success", path }));
      } catch (err) {
        await s.write(status({ error: (err as Error).message }));
      }
    });
  });

  // What Ollama has and Psyche cannot do: said, in Ollama's shape.
  const refuse = (what: string) => () => {
    throw new ApiError(
      501,
      "invalid_request_error",
      `${what} is not available on Psyche: it serves one model, set with psyche serve --model (a GGUF file, an hf: URI or a URL)`,
    );
  };
  app.post("/api/create", refuse("creating a model (/api/create)"));
  app.post("/api/push", refuse("pushing a model (/api/push)"));
  app.post("/api/copy", refuse("copying a model (/api/copy)"));
  app.delete("/api/delete", refuse("deleting a model (/api/delete)"));
  app.on(["HEAD", "POST"], "/api/blobs/:digest", refuse("uploading blobs (/api/blobs)"));
  return app;
}

// The Hono app: every route, one error shape, the body limit and the API key.
import { turnIdOf } from "../conversation/response-ids.js";
import { presentedKey } from "../api-keys.js";
import { serverRoute, turnInKeyScopes } from "./request-scope.js";
import { type Context, Hono, type Next } from "hono";
import { HTTPException } from "hono/http-exception";
import type { WebServices } from "../web-services.js";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ContextOverflow, UserError } from "../errors.js";
import { ApiError } from "./errors.js";
import { presence } from "./presence.js";
import { bodyLimit } from "./body-limit.js";
import { PsycheMetrics } from "./metrics.js";
import { chatCompletionRoutes } from "./routes/chat-completions.js";
import { completionRoutes } from "./routes/completions.js";
import { responseRoutes } from "./routes/responses.js";
import { eventRoutes } from "./routes/events.js";
import { dashboardRoutes } from "./routes/dashboard.js";
import { healthRoutes } from "./routes/health.js";
import { modelRoutes } from "./routes/models.js";
import { turnRoutes } from "./routes/turns.js";
import { memoryRoutes } from "./routes/memories.js";
import { moodRoutes } from "./routes/mood.js";
import { embeddingRoutes } from "./routes/embeddings.js";
import { dreamRoutes } from "./routes/dreams.js";
import { dreamConfigRoutes } from "./routes/dream-config.js";
import { clientRoutes } from "./routes/clients.js";
import { hookRoutes } from "./routes/hooks.js";
import { messageRoutes } from "./routes/messages.js";
import { anthropicError, isAnthropicPath } from "./messages/errors.js";
import { ollamaChatRoutes } from "./routes/ollama-chat.js";
import { ollamaModelRoutes } from "./routes/ollama-models.js";

/** The paths of Ollama's API, which answer errors in its shape. */
const isOllamaPath = (path: string) => path.startsWith("/api/");

export function createApp(services: WebServices): Hono {
  const app = new Hono();
  const metrics = new PsycheMetrics(services);
  const deps: WebServices = {
    ...services,
    firstToken: (seconds) => metrics.firstToken(seconds),
    ignoredFields: (api, fields) => metrics.ignoredFields(api, fields),
  };
  app.use("*", metrics.middleware());

  // OpenAI's error shape, Anthropic's on the Messages API's paths (http/messages/errors.ts), or
  // Ollama's {"error": message} on its /api/* paths.
  const answer = (c: Context, err: UserError) =>
    c.json(
      isAnthropicPath(c.req.path)
        ? anthropicError(err.status, err instanceof ContextOverflow ? err.anthropicMessage : err.message)
        : isOllamaPath(c.req.path)
          ? { error: err.message }
          : err.toJSON(),
      err.status as ContentfulStatusCode,
    );
  app.onError((err, c) => {
    if (err instanceof UserError) {
      if (err.status >= 500) deps.log.error({ err, path: c.req.path }, "request failed");
      return answer(c, err);
    }
    if (err instanceof HTTPException)
      return answer(c, new ApiError(err.status, err.status === 401 ? "authentication_error" : "invalid_request_error", err.message));
    deps.log.error({ err, path: c.req.path }, "request failed");
    return answer(c, new ApiError(500, "server_error", "The server failed to handle the request; see its log"));
  });
  app.notFound((c) =>
    answer(c, new ApiError(404, "not_found_error", `No route for ${c.req.method} ${c.req.path}`, { code: "unknown_url" })),
  );

  // Before the key check, so that it sees the answer a refused request got (it checks the key itself).
  const present = presence(deps);
  app.use("/v1/*", present);
  app.use("/dream/*", present);
  app.use("/mcp", present);
  app.use("/hooks/*", present);
  app.use("/api/*", present);

  if (deps.apiKeys.length) {
    const requireKey = async (c: Context, next: Next) => {
      // Anthropic's clients send the key as x-api-key.
      const key = presentedKey(deps.apiKeys, c.req.header("authorization"), c.req.header("x-api-key"));
      if (!key) {
        throw new ApiError(
          401,
          "authentication_error",
          "Missing or wrong API key: send Authorization: Bearer <PSYCHE_API_KEY> (or x-api-key: <PSYCHE_API_KEY>)",
          { code: "invalid_api_key" },
        );
      }
      c.set("keyScopes", key.scopes);
      await next();
    };
    app.use("/v1/*", requireKey);
    app.use("/dream/*", requireKey);
    app.use("/metrics", requireKey);
    app.use("/hooks/*", requireKey);
    app.use("/api/*", requireKey);
    // The server's settings are closed to a key bound to scopes (http/request-scope.ts).
    for (const path of ["/dream/config", "/dream/dnd"]) app.use(path, serverRoute);
    for (const path of ["/v1/turns/:id", "/v1/turns/:id/*"])
      app.use(
        path,
        turnInKeyScopes(deps, (c) => c.req.param("id") ?? ""),
      );
    for (const path of ["/v1/responses/:id", "/v1/responses/:id/*"])
      app.use(
        path,
        turnInKeyScopes(deps, (c) => turnIdOf(c.req.param("id") ?? "")),
      );
  }
  const limit = bodyLimit(deps.bodyLimit, () => {
    throw new ApiError(413, "invalid_request_error", `The request body is larger than ${deps.bodyLimit} bytes (PSYCHE_BODY_LIMIT)`, {
      code: "request_too_large",
    });
  });
  app.use("/v1/*", limit);
  app.use("/dream/*", limit);
  app.use("/hooks/*", limit);
  app.use("/api/*", limit);

  app.get("/metrics", async (c) => c.text(await metrics.render(), 200, { "Content-Type": metrics.registry.contentType }));
  app.route("/", healthRoutes(deps));
  app.route("/", modelRoutes(deps));
  app.route("/", chatCompletionRoutes(deps));
  app.route("/", completionRoutes(deps));
  app.route("/", responseRoutes(deps));
  app.route("/", messageRoutes(deps));
  app.route("/", ollamaChatRoutes(deps));
  app.route("/", ollamaModelRoutes(deps));
  app.route("/", eventRoutes(deps));
  app.route("/", dashboardRoutes());
  app.route("/", turnRoutes(deps));
  app.route("/", memoryRoutes(deps));
  app.route("/", moodRoutes(deps));
  app.route("/", embeddingRoutes(deps));
  app.route("/", dreamRoutes(deps));
  app.route("/", dreamConfigRoutes(deps));
  app.route("/", hookRoutes(deps));
  app.route("/", clientRoutes(deps));
  return app;
}

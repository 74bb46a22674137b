import { Hono } from "hono";
import type { HttpDeps } from "../deps.js";

const STARTED = Math.floor(Date.now() / 1000);

export function modelRoutes(deps: HttpDeps): Hono {
  const app = new Hono();
  const model = { id: deps.modelId, object: "model", created: STARTED, owned_by: "psyche" };
  app.get("/v1/models", (c) => c.json({ object: "list", data: [model] }));
  app.get("/v1/models/:id", (c) =>
    c.req.param("id") === deps.modelId
      ? c.json(model)
      : c.json({ error: { message: `The model '${c.req.param("id")}' does not exist`, type: "invalid_request_error", param: "model", code: "model_not_found" } }, 404),
  );
  return app;
}

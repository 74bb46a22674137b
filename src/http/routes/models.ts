import { Hono } from "hono";
import type { HttpDeps } from "../deps.js";
import { modelNotFound } from "../errors.js";

const STARTED = Math.floor(Date.now() / 1000);

export function modelRoutes(deps: HttpDeps): Hono {
  const app = new Hono();
  const model = { id: deps.modelId, object: "model", created: STARTED, owned_by: "psyche" };
  app.get("/v1/models", (c) => c.json({ object: "list", data: [model] }));
  app.get("/v1/models/:id", (c) => {
    if (c.req.param("id") !== deps.modelId) throw modelNotFound(c.req.param("id"), deps.modelId);
    return c.json(model);
  });
  return app;
}

import { Hono } from "hono";
import type { WebServices } from "../../web-services.js";
import { ModelNotFound } from "../../conversation/open-turn.js";

const STARTED = Math.floor(Date.now() / 1000);

export function modelRoutes(deps: WebServices): Hono {
  const app = new Hono();
  const model = { id: deps.modelId, object: "model", created: STARTED, owned_by: "psyche" };
  // The embedder is a model too: POST /v1/embeddings takes its id.
  const embedder = { id: deps.embedder.id, object: "model", created: STARTED, owned_by: "psyche" };
  app.get("/v1/models", (c) => c.json({ object: "list", data: [model, embedder] }));
  app.get("/v1/models/:id", (c) => {
    const id = c.req.param("id");
    if (id === embedder.id) return c.json(embedder);
    if (id !== deps.modelId) throw new ModelNotFound(id, deps.modelId);
    return c.json(model);
  });
  return app;
}

// Presence of clients that stay connected (Hermes): a heartbeat, a goodbye, who is here. While
// one is present no dream starts by itself; an arriving one wakes a running reverie at once
// (dreams/scheduler.ts, dreams/status.ts).
import { Hono } from "hono";
import { z } from "zod";
import { heartbeat, leave, presentClients } from "../../db/sql/clients.js";
import { wakeForArrival } from "../../dreams/status.js";
import type { WebServices } from "../../web-services.js";
import { ApiError } from "../errors.js";
import { fromZodError, invalidRequest } from "../../errors.js";
import { readJsonObject } from "../read-json.js";

const HeartbeatSchema = z.strictObject({
  client_id: z.uuid({ error: "client_id must be a UUID the client chose (the same on every heartbeat)" }),
  name: z.string().trim().min(1).max(64).default("client"),
});

export function clientRoutes(deps: WebServices): Hono {
  const app = new Hono();
  const heartbeatSeconds = Math.max(1, Math.floor(deps.presenceTtlSeconds / 3));

  app.post("/v1/presence", async (c) => {
    const parsed = HeartbeatSchema.safeParse(await readJsonObject(c));
    if (!parsed.success) throw fromZodError(parsed.error);
    const { arrived } = await heartbeat(deps.pool, {
      id: parsed.data.client_id,
      name: parsed.data.name,
      ttlSeconds: deps.presenceTtlSeconds,
    });
    const woke = arrived ? await wakeForArrival(deps) : false;
    if (arrived) deps.log.info({ clientId: parsed.data.client_id, name: parsed.data.name, woke }, "a client arrived");
    const present = await presentClients(deps.pool, deps.presenceTtlSeconds);
    return c.json({
      object: "presence",
      client_id: parsed.data.client_id,
      arrived,
      woke,
      present: present.length,
      heartbeat_seconds: heartbeatSeconds,
    });
  });

  app.delete("/v1/presence/:id", async (c) => {
    const id = z.uuid().safeParse(c.req.param("id"));
    if (!id.success) throw invalidRequest("client ids are UUIDs", "id");
    if (!(await leave(deps.pool, id.data)))
      throw new ApiError(404, "not_found_error", `no client ${id.data} is present`, { param: "id", code: "client_not_found" });
    deps.log.info({ clientId: id.data }, "a client left");
    return c.json({
      object: "presence",
      client_id: id.data,
      left: true,
      present: (await presentClients(deps.pool, deps.presenceTtlSeconds)).length,
    });
  });

  app.get("/v1/presence", async (c) => c.json({ object: "list", data: await presentClients(deps.pool, deps.presenceTtlSeconds) }));

  return app;
}

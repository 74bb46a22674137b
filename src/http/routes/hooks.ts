// POST /hooks/<event>: coding-agent hooks over HTTP (Claude Code's `"type": "http"` hooks post
// their input here; `psyche hook <event>` relays its stdin here). The body is the hook's input;
// the answer is what Claude Code reads, or with ?format=typed the typed result (agents/hook-input.ts).
import { Hono } from "hono";
import { z } from "zod";
import { claudeOutput } from "../../agents/hook-output.js";
import { HOOK_EVENTS, type HookEvent, HookInputSchemas } from "../../agents/hook-input.js";
import { runHook } from "../../agents/hooks.js";
import { fromZodError, UserError } from "../../errors.js";
import type { WebServices } from "../../web-services.js";
import { readJsonObject } from "../read-json.js";
import { checkScope } from "../request-scope.js";
import { projectScope } from "../../scope.js";

const QuerySchema = z.object({ format: z.enum(["claude", "typed"]).default("claude") }).passthrough();

export function hookRoutes(deps: WebServices): Hono {
  const app = new Hono();
  app.post("/hooks/:event", async (c) => {
    const name = c.req.param("event");
    if (!(HOOK_EVENTS as readonly string[]).includes(name)) {
      throw new UserError(`No hook '${name}': the hooks are ${HOOK_EVENTS.join(", ")}`, { status: 404, code: "unknown_hook" });
    }
    const event = name as HookEvent;
    const query = QuerySchema.safeParse(c.req.query());
    if (!query.success) throw fromZodError(query.error);
    const input = HookInputSchemas[event].safeParse(await readJsonObject(c));
    if (!input.success) throw fromZodError(input.error);
    // The project's path is the hook's scope: a key bound to scopes reaches only its own projects.
    checkScope(c, projectScope((input.data as { cwd?: string }).cwd));
    const result = await runHook(
      { agents: deps.agents, memory: deps.memory, settings: deps.hooks },
      event,
      input.data as never,
      c.req.raw.signal,
    );
    return c.json(query.data.format === "typed" ? result : claudeOutput(event, result));
  });
  return app;
}

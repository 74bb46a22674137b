// POST /v1/completions: OpenAI's legacy text completions, which editors' autocomplete calls. The
// prompt is completed as it is (no persona, no recall, no memory: an autocomplete is not a
// conversation), through the queue and the worker as a chat is (conversation/open-completion.ts).
import { Hono } from "hono";
import { openCompletion } from "../../conversation/open-completion.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import { getTurn } from "../../db/sql/turns.js";
import type { WebServices } from "../../web-services.js";
import { readJsonObject } from "../read-json.js";
import { reportIgnored } from "../request-fields.js";
import { relayTurn } from "../relay-turn.js";
import { completionRequest, refuseUnfillableSuffix } from "../completions/translate.js";
import { textCompletion, textCompletionFrames, textCompletionId } from "../completions/render.js";

export function completionRoutes(deps: WebServices): Hono {
  const app = new Hono();
  app.post("/v1/completions", async (c) => {
    const { request, ignored, reply } = completionRequest(await readJsonObject(c), deps.strictParams);
    await refuseUnfillableSuffix(deps, request);
    const turn = await openCompletion(deps, request);
    reportIgnored(c, deps, "completions", ignored);
    c.header("X-Psyche-Turn", turn.turnId);
    const base = { id: textCompletionId(turn.turnId), created: Math.floor(Date.now() / 1000), model: deps.modelId };
    if (reply.stream)
      return relayTurn(c, deps, {
        follower: turn.follower,
        fresh: true,
        afterSeq: 0,
        read: (id) => getTurn(deps.pool, id),
        frames: textCompletionFrames({
          base,
          includeUsage: reply.includeUsage,
          echo: reply.echo ? request.prompt : null,
          turnId: turn.turnId,
        }),
      });
    return c.json(textCompletion(await finishedTurn(deps, turn.follower, c.req.raw.signal), base, reply.echo));
  });
  return app;
}

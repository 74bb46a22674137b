// POST /v1/chat/completions: the request translated (http/chat/translate.ts), the turn opened
// (conversation/open-turn.ts), and the reply relayed as a stream or sent whole.
import { Hono } from "hono";
import { openTurn } from "../../conversation/open-turn.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import { getTurn } from "../../db/sql/turns.js";
import type { WebServices } from "../../web-services.js";
import { readJsonObject } from "../read-json.js";
import { reportIgnored } from "../request-fields.js";
import { requestScope } from "../request-scope.js";
import { relayTurn } from "../relay-turn.js";
import { chatRequest } from "../chat/translate.js";
import { chatCompletion, completionId } from "../chat/render.js";
import { chatStreamFrames } from "../chat/stream.js";
import { turnHeaders } from "../turn-headers.js";

export function chatCompletionRoutes(deps: WebServices): Hono {
  const app = new Hono();

  app.post("/v1/chat/completions", async (c) => {
    const { request, ignored, reply } = chatRequest(await readJsonObject(c), (h) => c.req.header(h), {
      strict: deps.strictParams,
      scope: requestScope(c),
    });
    const turn = await openTurn(deps, request);
    reportIgnored(c, deps, "chat.completions", [...ignored, ...turn.ignored]);
    turnHeaders(c, turn);
    const base = { id: completionId(turn.turnId), created: Math.floor(Date.now() / 1000), model: deps.modelId };
    if (reply.stream)
      return relayTurn(c, deps, {
        follower: turn.follower,
        fresh: true,
        afterSeq: 0,
        read: (id) => getTurn(deps.pool, id),
        frames: chatStreamFrames({ base, includeUsage: reply.includeUsage, announceRole: true, turnId: turn.turnId }),
      });
    // Not streaming: wait for the closing event. A client that goes away does not cancel it.
    return c.json(chatCompletion(await finishedTurn(deps, turn.follower, c.req.raw.signal), base));
  });

  return app;
}

// Ollama's POST /api/chat and POST /api/generate: the request translated
// (http/ollama/translate.ts), the turn opened (conversation/open-turn.ts) as on every API, and
// the reply relayed as NDJSON or sent whole. Ollama streams unless told not to.
import { Hono, type Context } from "hono";
import { openTurn } from "../../conversation/open-turn.js";
import { openCompletion } from "../../conversation/open-completion.js";
import { refuseUnfillableSuffix } from "../completions/translate.js";
import type { TurnFollower } from "../../conversation/follow-turn.js";
import { finishedTurn } from "../../conversation/finished-turn.js";
import { getTurn } from "../../db/sql/turns.js";
import { firstEventAt } from "../../db/sql/turn-events.js";
import type { Pool } from "../../db/pool.js";
import type { WebServices } from "../../web-services.js";
import { readJsonObject } from "../read-json.js";
import { reportIgnored } from "../request-fields.js";
import { requestScope } from "../request-scope.js";
import { relayTurn } from "../relay-turn.js";
import { turnHeaders } from "../turn-headers.js";
import type { HeaderOf, TranslateOptions } from "../chat/translate.js";
import { ollamaChatRequest, ollamaGenerateRequest, type OllamaTranslation } from "../ollama/translate.js";
import { ollamaClosing, ollamaLoaded, type OllamaShape, type TimedTurn } from "../ollama/render.js";
import { ndjsonHeaders, ollamaStreamFrames } from "../ollama/stream.js";

async function timedTurn(pool: Pool, turnId: string): Promise<TimedTurn | undefined> {
  const [turn, first] = await Promise.all([getTurn(pool, turnId), firstEventAt(pool, turnId)]);
  return turn && { turn, firstEventAt: first };
}

type Translate = (body: Record<string, unknown>, header: HeaderOf, o: TranslateOptions) => OllamaTranslation;

export function ollamaChatRoutes(deps: WebServices): Hono {
  const app = new Hono();
  const route = (shape: OllamaShape, translate: Translate) => async (c: Context) => {
    const body = await readJsonObject(c);
    const { request, completion, ignored, stream } = translate(body, (h) => c.req.header(h), {
      strict: deps.strictParams,
      scope: requestScope(c),
    });
    const model = typeof body.model === "string" ? body.model : deps.modelId;
    if (completion) {
      await refuseUnfillableSuffix(deps, completion);
      const opened = await openCompletion(deps, completion);
      reportIgnored(c, deps, `ollama.${shape}`, ignored);
      c.header("X-Psyche-Turn", opened.turnId);
      return answer(c, shape, model, opened, stream);
    }
    if (!request) {
      reportIgnored(c, deps, `ollama.${shape}`, ignored);
      const loaded = ollamaLoaded(shape, model);
      if (!stream) return c.json(loaded);
      ndjsonHeaders(c);
      return c.body(`${JSON.stringify(loaded)}\n`);
    }
    const turn = await openTurn(deps, request);
    reportIgnored(c, deps, `ollama.${shape}`, [...ignored, ...turn.ignored]);
    turnHeaders(c, turn);
    return answer(c, shape, model, turn, stream);
  };
  /** The reply relayed as NDJSON, or whole once the turn ends (a client that goes away does not cancel it). */
  const answer = async (
    c: Context,
    shape: OllamaShape,
    model: string,
    turn: { turnId: string; follower: TurnFollower },
    stream: boolean,
  ) => {
    if (stream)
      return relayTurn(c, deps, {
        follower: turn.follower,
        fresh: true,
        afterSeq: 0,
        read: (id) => timedTurn(deps.pool, id),
        frames: ollamaStreamFrames(shape, model, turn.turnId),
        headers: ndjsonHeaders,
      });
    const finished = await finishedTurn(deps, turn.follower, c.req.raw.signal);
    return c.json(ollamaClosing(shape, model, { turn: finished, firstEventAt: await firstEventAt(deps.pool, finished.id) }, true));
  };
  app.post("/api/chat", route("chat", ollamaChatRequest));
  app.post("/api/generate", route("generate", ollamaGenerateRequest));
  return app;
}

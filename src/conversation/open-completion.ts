// The way into a text completion (POST /v1/completions): the checks every turn gets (the
// model's name, the reply budget, the context), then a queued turn of purpose "completion" and
// its job, stored together, and the worker signalled (or the turn handed to the worker beside
// it, jobs/hand-off.ts), as conversation/open-turn.ts does for a chat. It belongs to no
// conversation: no persona, no recall, no memory (docs/api.md).
import { randomUUID } from "node:crypto";
import { insertCompletion } from "../db/sql/turns.js";
import { takenIn } from "../jobs/hand-off.js";
import { Channel } from "../jobs/bus.js";
import { INFERENCE_QUEUE, Priority, sendStatement } from "../jobs/queue.js";
import { ContextOverflow } from "../errors.js";
import { knownLimits } from "./context-fit.js";
import { TurnFollower } from "./follow-turn.js";
import { ModelNotFound, type OpenTurnDeps, replyBudget } from "./open-turn.js";
import { handedTurn } from "./start-turn.js";
import { checkStorableText } from "./storable-text.js";
import type { Sampling } from "./turn-request.js";

/** What a text completion asks, whichever API asked (OpenAI's legacy completions). */
export interface CompletionRequest {
  model: string;
  prompt: string;
  /** The text the completion leads into (fill-in-the-middle). */
  suffix: string | null;
  sampling: Sampling;
  budget: { maxTokens: number | null; field: string };
  stream: boolean;
}

export interface OpenedCompletion {
  turnId: string;
  follower: TurnFollower;
}

/** Opens the completion `request` asks for, or refuses it (a UserError) having written nothing. */
export async function openCompletion(deps: OpenTurnDeps, request: CompletionRequest): Promise<OpenedCompletion> {
  if (request.model !== deps.modelId && deps.strictParams) throw new ModelNotFound(request.model, deps.modelId);
  checkStorableText("prompt", request.prompt);
  checkStorableText("suffix", request.suffix);
  for (const stop of request.sampling.stop) checkStorableText("stop", stop);
  // As a chat's turn (open-turn.ts): the JavaScript thread's work until it is stored.
  return takenIn(deps.turnTaker, () => open(deps, request));
}

async function open(deps: OpenTurnDeps, request: CompletionRequest): Promise<OpenedCompletion> {
  let maxTokens = replyBudget(request.budget.maxTokens, deps.maxTokens, request.budget.field, deps.strictParams);
  const limits = await knownLimits({ ...deps, persona: undefined, serverTools: undefined });
  if (limits.countTokens && limits.contextSize !== undefined) {
    const used =
      ((await limits.countTokens(request.prompt)) ?? 0) + (request.suffix ? ((await limits.countTokens(request.suffix)) ?? 0) + 3 : 1);
    if (used >= limits.contextSize) throw new ContextOverflow(used, limits.contextSize);
    maxTokens = Math.max(1, Math.min(maxTokens, limits.contextSize - used));
  }
  const follower = new TurnFollower(deps, randomUUID());
  try {
    const jobId = randomUUID();
    const job = await sendStatement(
      deps.boss,
      INFERENCE_QUEUE,
      { kind: "chat", turnId: follower.turnId },
      { id: jobId, priority: Priority.chat },
    );
    const s = request.sampling;
    const reservation = deps.turnTaker?.reserve();
    try {
      const stored = await insertCompletion(
        deps.pool,
        {
          turnId: follower.turnId,
          jobId,
          model: deps.modelId,
          prompt: request.prompt,
          suffix: request.suffix,
          temperature: s.temperature,
          topP: s.topP,
          topK: s.topK,
          maxTokens,
          seed: s.seed,
          stop: s.stop,
          stream: request.stream,
          presencePenalty: s.presencePenalty,
          frequencyPenalty: s.frequencyPenalty,
          logitBias: s.logitBias,
          claimedBy: reservation?.workerId,
        },
        job,
      );
      // A text completion's prompt is its own (no conversation): handed as a claim would read it.
      if (reservation) reservation.hand({ jobId, turn: handedTurn(stored, []), stored: Promise.resolve() });
      else deps.bus.notify(Channel.jobs, follower.turnId);
    } finally {
      reservation?.release();
    }
    return { turnId: follower.turnId, follower };
  } catch (err) {
    follower.close();
    throw err;
  }
}

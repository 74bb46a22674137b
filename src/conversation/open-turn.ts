// The one way into a turn, for every surface (conversation/turn-request.ts): the checks every
// request gets (the model's name, the reply budget), then the conversation found or made, the
// new messages, a queued turn and its job stored together (conversation/start-turn.ts, with the
// context checked there), the worker signalled (or the turn, stored claimed, handed to the
// worker beside it: jobs/hand-off.ts), and a follower subscribed before any of it, so the turn's
// first signal cannot be missed.
import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import { appendMessages, lockConversation, type OpenedConversation, openConversation } from "../db/sql/conversations.js";
import { getResponse, insertResponse, lastPositionOfTurn } from "../db/sql/responses.js";
import { type TakenTurn, turnOfMessage } from "../db/sql/turns.js";
import { inTransaction, onConnection, type Pool, type PoolClient } from "../db/pool.js";
import { Channel, type SignalBus } from "../jobs/bus.js";
import { invalidRequest, UserError } from "../errors.js";
import { type ContextLimits, type KnownLimits, knownLimits } from "./context-fit.js";
import { type FollowDeps, TurnFollower } from "./follow-turn.js";
import { responseId } from "./response-ids.js";
import { queueTurnIn, type QueuedTurn } from "./start-turn.js";
import { openCalls } from "./tool-results.js";
import { checkStorableTurn } from "./storable-text.js";
import { TranscriptError } from "./tool-transcript.js";
import type { TurnRequest } from "./turn-request.js";
import { type HandedTurn, settlement, takenIn, type TurnTaker } from "../jobs/hand-off.js";

export interface OpenTurnDeps extends FollowDeps, ContextLimits {
  pool: Pool;
  boss: PgBoss;
  bus: SignalBus;
  /** The model this server serves. */
  modelId: string;
  /** Whether the model has a thinking channel, where this process knows (web-services.ts). */
  thinks?: (() => Promise<boolean | undefined>) | undefined;
  /** Default and ceiling of a reply's tokens. */
  maxTokens: number;
  /** Refuse other models' names and a budget above the ceiling (--strict-params). */
  strictParams: boolean;
  /** The inference worker of this process, where it has one (psyche serve): a turn it has room for is handed to it (jobs/hand-off.ts). */
  turnTaker?: TurnTaker | undefined;
}

export interface OpenedTurn {
  turnId: string;
  conversationId: string;
  /** Follows the turn's events; closed already when no turn was queued (waitingFor). */
  follower: TurnFollower;
  /** A tool result that is not the last its reply waits for: the calls still open, and no turn queued yet. */
  waitingFor: string[];
  /** Request fields the turn could not honour, to name beside the translation's (a thought budget for a model that does not think). */
  ignored: string[];
}

export class ModelNotFound extends UserError {
  override name = "ModelNotFound";
  constructor(requested: string, served: string) {
    super(`The model '${requested}' does not exist: this server serves '${served}' (see GET /v1/models)`, {
      status: 404,
      param: "model",
      code: "model_not_found",
    });
  }
}

export class ConversationNotFound extends UserError {
  override name = "ConversationNotFound";
  constructor(message: string) {
    super(message, { status: 404, param: "conversation_id", code: "conversation_not_found" });
  }
}

export const previousNotFound = (turnId: string) =>
  new UserError(`Previous response with id '${responseId(turnId)}' not found (deleted, never stored with store: true, or never made)`, {
    status: 404,
    param: "previous_response_id",
    code: "previous_response_not_found",
  });

/**
 * The reply budget: the request's, else the server's. Above the server's ceiling it is
 * clamped to the ceiling (agents ask for 32,000 and more; the reply's finish reason says when
 * the budget was reached), or with `strict` (--strict-params) a 400.
 */
export function replyBudget(requested: number | null | undefined, ceiling: number, field = "max_tokens", strict = false): number {
  const maxTokens = requested ?? ceiling;
  if (maxTokens > ceiling && strict)
    throw invalidRequest(
      `${field} is ${maxTokens}, above this server's limit of ${ceiling} (PSYCHE_MAX_TOKENS; this server runs with --strict-params)`,
      field,
    );
  return Math.min(maxTokens, ceiling);
}

/** Opens the turn `request` asks for, or refuses it (a UserError) having written nothing. */
export async function openTurn(deps: OpenTurnDeps, request: TurnRequest): Promise<OpenedTurn> {
  // Agents name their own models: the one model serves them all, and says so in the reply.
  if (request.model !== deps.modelId && deps.strictParams) throw new ModelNotFound(request.model, deps.modelId);
  checkStorableTurn(request);
  // Until it is stored, the turn is this process's JavaScript thread's work: the model beside it leaves it a core.
  return takenIn(deps.turnTaker, () => open(deps, request));
}

async function open(deps: OpenTurnDeps, request: TurnRequest): Promise<OpenedTurn> {
  const follower = new TurnFollower(deps, randomUUID());
  // A thought budget means nothing to a model without a thinking channel: accepted, and named.
  const thoughtless = request.thinking !== null && (await deps.thinks?.()) === false;
  try {
    const turn: QueuedTurn = {
      turnId: follower.turnId,
      conversationId: "",
      scope: request.scope,
      purpose: request.purpose,
      model: deps.modelId,
      messages: request.messages,
      tools: request.tools,
      toolChoice: request.toolChoice,
      parallelToolCalls: request.parallelToolCalls,
      responseFormat: request.responseFormat,
      ...request.sampling,
      maxTokens: replyBudget(request.budget.maxTokens, deps.maxTokens, request.budget.field, deps.strictParams),
      instructions: request.instructions,
      thoughtBudget: thoughtless ? null : (request.thinking?.budget ?? null),
      thoughtEffort: thoughtless ? null : (request.thinking?.effort ?? null),
      stream: request.stream,
    };
    // Before any transaction: on the embedded database a query elsewhere waits for one to end (context-fit.ts).
    const limits = await knownLimits(deps);
    const reservation = deps.turnTaker?.reserve();
    // Handed just before its storing statement, the turn's prompt is read while it is stored;
    // the worker writes nothing for it until the store has committed, and drops it if it fails.
    const storing = settlement();
    const beforeStore = reservation && ((taken: HandedTurn) => reservation.hand({ ...taken, stored: storing.promise }));
    let opened: Stored;
    try {
      opened = await store(deps, limits, request, { ...turn, claimedBy: reservation?.workerId, beforeStore });
      storing.resolve();
    } catch (err) {
      storing.reject(err);
      throw err;
    } finally {
      reservation?.release();
    }
    if (opened.waitingFor.length) follower.close();
    else if (!opened.taken?.turn) deps.bus.notify(Channel.jobs, turn.turnId);
    return {
      turnId: turn.turnId,
      conversationId: opened.conversationId,
      follower,
      waitingFor: opened.waitingFor,
      ignored: thoughtless ? [request.thinking!.field] : [],
    };
  } catch (err) {
    follower.close();
    throw err;
  }
}

const NOTHING_STORED: OpenedConversation = { messages: [], maxPosition: 0 };

interface Stored {
  conversationId: string;
  /** The calls a tool result's reply still waits for (no turn was queued). */
  waitingFor: string[];
  /** The turn's job, and the turn where it was stored claimed (turn.claimedBy). */
  taken?: TakenTurn | undefined;
}

/** Stores the turn where its conversation says; returns the conversation, and the calls still open for a tool result. */
async function store(deps: OpenTurnDeps, limits: KnownLimits, request: TurnRequest, turn: QueuedTurn): Promise<Stored> {
  const ref = request.conversation;
  let taken: TakenTurn | undefined;
  const queue = async (db: Pick<PoolClient, "query">, opened: OpenedConversation, t: QueuedTurn) => {
    taken = await queueTurnIn(db, { boss: deps.boss, limits }, opened, t);
  };
  const record = async (client: PoolClient, previousTurnId: string | null) => {
    if (request.record)
      await insertResponse(client, { turnId: turn.turnId, previousTurnId, ...request.record, input: request.record.items });
  };
  if (ref.kind === "own" && !request.record) {
    // A conversation of its own: nothing to read or lock, so one statement, on a connection
    // taken first, so that it is sent before the turn is handed (conversation/start-turn.ts).
    const conversationId = randomUUID();
    await onConnection(deps.pool, (client) => queue(client, NOTHING_STORED, { ...turn, conversationId }));
    return { conversationId, waitingFor: [], taken };
  }
  const stored = await inTransaction(deps.pool, async (client): Promise<Stored> => {
    switch (ref.kind) {
      case "own": {
        const conversationId = randomUUID();
        await queue(client, NOTHING_STORED, { ...turn, conversationId });
        await record(client, null);
        return { conversationId, waitingFor: [] };
      }
      case "named": {
        const opened = await openConversation(client, ref.id, request.scope);
        await queue(client, opened, { ...turn, conversationId: ref.id });
        await record(client, null);
        return { conversationId: ref.id, waitingFor: [] };
      }
      case "after": {
        const conversationId = await previousConversation(client, ref.turnId);
        const opened = await openConversation(client, conversationId, request.scope);
        // Read under the conversation's lock, which openConversation took.
        const last = await lastPositionOfTurn(client, conversationId, ref.turnId);
        if (last === null)
          throw invalidRequest(
            `Previous response '${responseId(ref.turnId)}' was superseded: a later response branched its conversation before it. Continue from a response on the current branch`,
            "previous_response_id",
            "previous_response_superseded",
          );
        await queue(client, opened, { ...turn, conversationId, continueAfter: last });
        await record(client, ref.turnId);
        return { conversationId, waitingFor: [] };
      }
      case "tool-result":
        return { conversationId: ref.id, waitingFor: await storeToolResult(client, queue, ref.id, request, turn) };
      default:
        return ref satisfies never;
    }
  });
  return { ...stored, taken };
}

/** The conversation of a stored, finished response a request continues from. */
async function previousConversation(client: PoolClient, turnId: string): Promise<string> {
  const previous = await getResponse(client, turnId);
  if (!previous || !previous.store || previous.deleted_at) throw previousNotFound(turnId);
  if (previous.status === "queued" || previous.status === "running")
    throw invalidRequest(
      `Previous response '${responseId(turnId)}' is still in progress: continue from it once it has finished`,
      "previous_response_id",
      "previous_response_in_progress",
    );
  // A response's turn is always a conversation's (a text completion is never stored as a response).
  if (!previous.conversation_id) throw previousNotFound(turnId);
  return previous.conversation_id;
}

/**
 * A result for one of the calls the conversation's last reply made, under the conversation's
 * lock, so that two last results cannot both (or neither) queue the turn. The last one queues
 * it, generated like the turn that made the calls, its tools offered again (the model chooses
 * now: a forced choice would force another call). Returns the calls still open.
 */
async function storeToolResult(
  client: PoolClient,
  queue: (db: PoolClient, opened: OpenedConversation, t: QueuedTurn) => Promise<void>,
  conversationId: string,
  request: TurnRequest,
  turn: QueuedTurn,
): Promise<string[]> {
  const result = request.messages[0];
  if (request.messages.length !== 1 || result?.role !== "tool" || !result.toolCallId)
    throw new Error("a tool-result turn request holds exactly one tool message");
  if (!(await lockConversation(client, conversationId))) throw new ConversationNotFound(`No conversation '${conversationId}'`);
  const opened = await openConversation(client, conversationId, request.scope);
  const { assistantId, open } = openCalls(opened.messages);
  if (!open.includes(result.toolCallId))
    throw new TranscriptError(
      open.length
        ? `tool_call_id ${JSON.stringify(result.toolCallId)} is not waiting for a result; these are: ${open.join(", ")}`
        : `no tool call in conversation '${conversationId}' is waiting for a result`,
    );
  const waitingFor = open.filter((id) => id !== result.toolCallId);
  if (waitingFor.length) {
    await appendMessages(client, conversationId, null, [result]);
    return waitingFor;
  }
  const made = assistantId === null ? undefined : await turnOfMessage(client, assistantId);
  await queue(client, opened, {
    ...turn,
    conversationId,
    tools: made?.tools ?? null,
    toolChoice: made?.tools?.length ? "auto" : null,
    parallelToolCalls: made?.parallel_tool_calls ?? null,
    temperature: made?.temperature ?? null,
    topP: made?.top_p ?? null,
    topK: made?.top_k ?? null,
    maxTokens: made?.max_tokens ?? turn.maxTokens,
    seed: null,
    stop: made?.stop ?? [],
  });
  return [];
}

// The web side of POST /v1/responses: a turn (conversation/start-turn.ts) and its responses row
// in one transaction. previous_response_id continues that response's conversation right after
// it; when later messages exist there, they are superseded (a branch, as an edit is in chat).
import { randomUUID } from "node:crypto";
import { openConversation } from "../db/sql/conversations.js";
import { getResponse, insertResponse, lastPositionOfTurn, type StoredInputItem } from "../db/sql/responses.js";
import { inTransaction } from "../db/pool.js";
import { Channel } from "../jobs/bus.js";
import { queueTurnIn, type StartedTurn, type StartTurnInput, type TurnDeps } from "./start-turn.js";
import { knownLimits } from "./context-fit.js";
import { invalidRequest, UserError } from "../errors.js";
import type { NewMessage } from "../db/sql/conversations.js";
import { responseId } from "./response-ids.js";

export interface StartResponseInput extends Omit<StartTurnInput, "continueAfter"> {
  turnId: string;
  /** The conversation messages the input items stand for (http/responses/input-items.ts). */
  messages: NewMessage[];
  items: StoredInputItem[];
  previousTurnId: string | null;
  store: boolean;
  metadata: Record<string, string> | null;
}

export const previousNotFound = (turnId: string) =>
  new UserError(`Previous response with id '${responseId(turnId)}' not found (deleted, never stored with store: true, or never made)`, {
    status: 404,
    param: "previous_response_id",
    code: "previous_response_not_found",
  });

export async function startResponse(deps: TurnDeps, input: StartResponseInput): Promise<StartedTurn> {
  const { items, previousTurnId, store, metadata, messages, ...turn } = input;
  if (messages.length === 0) throw invalidRequest("input must hold at least one item", "input");
  let conversationId = turn.conversationId;
  const limits = await knownLimits(deps);
  await inTransaction(deps.pool, async (client) => {
    let after: number | undefined;
    if (previousTurnId) {
      const previous = await getResponse(client, previousTurnId);
      if (!previous || !previous.store || previous.deleted_at) throw previousNotFound(previousTurnId);
      if (previous.status === "queued" || previous.status === "running") {
        throw invalidRequest(
          `Previous response '${responseId(previousTurnId)}' is still in progress: continue from it once it has finished`,
          "previous_response_id",
          "previous_response_in_progress",
        );
      }
      conversationId = previous.conversation_id;
    }
    conversationId ??= randomUUID();
    const opened =
      previousTurnId || turn.conversationId ? await openConversation(client, conversationId, turn.scope) : { messages: [], maxPosition: 0 };
    if (previousTurnId) {
      // Read under the conversation's lock, which openConversation took.
      const last = await lastPositionOfTurn(client, conversationId, previousTurnId);
      if (last === null) {
        throw invalidRequest(
          `Previous response '${responseId(previousTurnId)}' was superseded: a later response branched its conversation before it. Continue from a response on the current branch`,
          "previous_response_id",
          "previous_response_superseded",
        );
      }
      after = last;
    }
    await queueTurnIn(client, { boss: deps.boss, limits }, opened, {
      ...turn,
      conversationId,
      messages,
      ...(after === undefined ? {} : { continueAfter: after }),
    });
    await insertResponse(client, { turnId: turn.turnId, previousTurnId, store, metadata, input: items });
  });
  deps.bus.notify(Channel.jobs, turn.turnId);
  return { turnId: turn.turnId, conversationId: conversationId! };
}

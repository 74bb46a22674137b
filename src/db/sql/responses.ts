// The Responses API's rows beside their turns (migrations/000012_responses.sql).
import type { Queryable } from "../pool.js";
import { type Turn, turnColumns } from "./turns.js";

/** An input item as GET /v1/responses/{id}/input_items lists it. */
export type StoredInputItem =
  | {
      type: "message";
      id: string;
      role: "user" | "assistant" | "system" | "developer";
      status: "completed";
      content: { type: "input_text" | "output_text"; text: string }[];
    }
  | { type: "function_call"; id: string; call_id: string; name: string; arguments: string; status: "completed" }
  | { type: "function_call_output"; id: string; call_id: string; output: string; status: "completed" };

export interface ResponseRow extends Turn {
  previous_turn_id: string | null;
  store: boolean;
  metadata: Record<string, string> | null;
  input: StoredInputItem[];
  deleted_at: Date | null;
}

export interface NewResponse {
  turnId: string;
  previousTurnId: string | null;
  store: boolean;
  metadata: Record<string, string> | null;
  input: readonly StoredInputItem[];
}

export async function insertResponse(db: Queryable, r: NewResponse): Promise<void> {
  await db.query("insert into responses (turn_id, previous_turn_id, store, metadata, input) values ($1, $2, $3, $4::jsonb, $5::jsonb)", [
    r.turnId,
    r.previousTurnId,
    r.store,
    r.metadata && Object.keys(r.metadata).length ? JSON.stringify(r.metadata) : null,
    JSON.stringify(r.input),
  ]);
}

/** A response with its turn; deleted and unstored ones too (the caller decides what it may see). */
export async function getResponse(db: Queryable, turnId: string): Promise<ResponseRow | undefined> {
  const res = await db.query<ResponseRow>(
    `select ${turnColumns("t")}, r.previous_turn_id, r.store, r.metadata, r.input, r.deleted_at
     from responses r join turns t on t.id = r.turn_id where r.turn_id = $1`,
    [turnId],
  );
  return res.rows[0];
}

/**
 * Where a response ends in its conversation: the last active message its turn wrote (its input
 * or its reply); null when a later branch superseded them. Read under the conversation's lock.
 */
export async function lastPositionOfTurn(db: Queryable, conversationId: string, turnId: string): Promise<number | null> {
  const res = await db.query<{ last: number | null }>(
    "select max(position) as last from messages where conversation_id = $1 and turn_id = $2 and superseded_at is null",
    [conversationId, turnId],
  );
  return res.rows[0]?.last ?? null;
}

/** Marks a stored response deleted; false when there is none to delete. */
export async function deleteResponse(db: Queryable, turnId: string): Promise<boolean> {
  const res = await db.query("update responses set deleted_at = now() where turn_id = $1 and store and deleted_at is null", [turnId]);
  return res.rowCount === 1;
}

import { DEFAULT_SCOPE } from "../../scope.js";
import { UserError } from "../../errors.js";
import type { ToolCall } from "../../tools/types.js";
import type { Queryable } from "../pool.js";

export interface StoredMessage {
  id: number;
  position: number;
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  name: string | null;
  tool_calls: ToolCall[] | null;
  tool_call_id: string | null;
  /** The mood and memories a turn put before this user message (migrations/000031_message_context.sql). */
  context: string | null;
}

export interface OpenedConversation {
  /** The active transcript (superseded messages left out), in order. */
  messages: StoredMessage[];
  /** The highest position used, superseded messages included: new ones go after it. */
  maxPosition: number;
}

/**
 * Creates the conversation if it is new (in `scope`), else touches it; returns its transcript.
 * One round trip. A conversation of another scope is not this request's: a 404, as if it were
 * not there (src/scope.ts).
 */
export async function openConversation(db: Queryable, id: string, scope: string = DEFAULT_SCOPE): Promise<OpenedConversation> {
  const res = await db.query<{ messages: StoredMessage[]; max_position: number; scope: string }>(
    `with conv as (
       insert into conversations (id, scope) values ($1, $2)
       on conflict (id) do update set last_active_at = now() returning id, scope)
     select (select scope from conv) as scope,
            (select coalesce(max(position), 0) from messages where conversation_id = $1) as max_position,
            coalesce((select json_agg(json_build_object('id', id, 'position', position, 'role', role, 'content', content, 'name', name,
                                                        'tool_calls', tool_calls, 'tool_call_id', tool_call_id, 'context', context)
                                      order by position)
                      from messages where conversation_id = $1 and superseded_at is null), '[]'::json) as messages`,
    [id, scope],
  );
  const row = res.rows[0]!;
  if (row.scope !== scope)
    throw new UserError(`no conversation ${id} in the scope ${JSON.stringify(scope)}`, {
      status: 404,
      param: "conversation_id",
      code: "conversation_not_found",
    });
  return { messages: row.messages, maxPosition: row.max_position };
}

export interface NewMessage {
  role: StoredMessage["role"];
  content: string;
  name?: string | undefined;
  toolCalls?: ToolCall[] | null | undefined;
  toolCallId?: string | null | undefined;
}

/** Columns of `messages` as arrays for unnest: tool calls as JSON text. */
export const messageArrays = (messages: readonly NewMessage[]) => ({
  roles: messages.map((m) => m.role),
  contents: messages.map((m) => m.content),
  names: messages.map((m) => m.name ?? null),
  toolCalls: messages.map((m) => (m.toolCalls?.length ? JSON.stringify(m.toolCalls) : null)),
  toolCallIds: messages.map((m) => m.toolCallId ?? null),
});

/** Appends messages after the conversation's last position (turnId: the turn that wrote them, if any); returns the last new id. */
export async function appendMessages(
  db: Queryable,
  conversationId: string,
  turnId: string | null,
  messages: readonly NewMessage[],
): Promise<number | undefined> {
  if (messages.length === 0) return undefined;
  const res = await db.query<{ id: number }>(
    `insert into messages (conversation_id, position, role, content, name, tool_calls, tool_call_id, turn_id)
     select $1, coalesce((select max(position) from messages where conversation_id = $1), 0) + m.ord,
            m.role, m.content, m.name, m.tool_calls::jsonb, m.tool_call_id, $2
     from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) with ordinality as m(role, content, name, tool_calls, tool_call_id, ord)
     returning id`,
    [
      conversationId,
      turnId,
      ...(({ roles, contents, names, toolCalls, toolCallIds }) => [roles, contents, names, toolCalls, toolCallIds])(
        messageArrays(messages),
      ),
    ],
  );
  return Math.max(...res.rows.map((r) => r.id));
}

export interface ConversationSummary {
  id: string;
  created_at: Date;
  last_active_at: Date;
  /** Active messages (superseded ones left out). */
  message_count: number;
  /** The last few active messages, oldest first, each cut to `chars`. */
  recent: { role: StoredMessage["role"]; content: string; tool_calls: number; at: Date }[];
}

/** Read-only: the named conversation, or the most recently active one when `id` is null. */
export async function conversationSummary(
  db: Queryable,
  id: string | null,
  last: number,
  chars: number,
): Promise<ConversationSummary | undefined> {
  const res = await db.query<ConversationSummary>(
    `with c as (select * from conversations where ($1::text is null or id = $1) order by last_active_at desc limit 1)
     select c.id, c.created_at, c.last_active_at,
       (select count(*)::int from messages m where m.conversation_id = c.id and m.superseded_at is null) as message_count,
       coalesce((select json_agg(json_build_object('role', r.role, 'content', left(r.content, $3), 'tool_calls', coalesce(jsonb_array_length(r.tool_calls), 0), 'at', r.created_at) order by r.position)
                 from (select * from messages m where m.conversation_id = c.id and m.superseded_at is null order by m.position desc limit $2) r), '[]'::json) as recent
     from c`,
    [id, last, chars],
  );
  return res.rows[0];
}

/** Locks a stored conversation until the transaction ends; false when there is none. */
export async function lockConversation(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query("select 1 from conversations where id = $1 for update", [id]);
  return (res.rowCount ?? 0) > 0;
}

/** The scope of a turn's conversation; undefined when there is no such turn. */
export async function turnScope(db: Queryable, turnId: string): Promise<string | undefined> {
  const res = await db.query<{ scope: string }>(
    "select c.scope from turns t join conversations c on c.id = t.conversation_id where t.id = $1::uuid",
    [turnId],
  );
  return res.rows[0]?.scope;
}

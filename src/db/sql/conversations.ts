import type { Queryable } from "../pool.js";

export interface StoredMessage {
  id: number;
  position: number;
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  name: string | null;
}

export interface OpenedConversation {
  /** The active transcript (superseded messages left out), in order. */
  messages: StoredMessage[];
  /** The highest position used, superseded messages included: new ones go after it. */
  maxPosition: number;
}

/** Creates the conversation if it is new, else touches it; returns its transcript. One round trip. */
export async function openConversation(db: Queryable, id: string): Promise<OpenedConversation> {
  const res = await db.query<{ messages: StoredMessage[]; max_position: number }>(
    `with conv as (
       insert into conversations (id) values ($1)
       on conflict (id) do update set last_active_at = now() returning id)
     select (select count(*) from conv) as touched,
            (select coalesce(max(position), 0) from messages where conversation_id = $1) as max_position,
            coalesce((select json_agg(json_build_object('id', id, 'position', position, 'role', role, 'content', content, 'name', name)
                                      order by position)
                      from messages where conversation_id = $1 and superseded_at is null), '[]'::json) as messages`,
    [id],
  );
  const row = res.rows[0]!;
  return { messages: row.messages, maxPosition: row.max_position };
}

export interface NewMessage {
  role: StoredMessage["role"];
  content: string;
  name?: string | undefined;
}

/** Appends messages after the conversation's last position; returns the last new id. */
export async function appendMessages(db: Queryable, conversationId: string, turnId: string, messages: readonly NewMessage[]): Promise<number | undefined> {
  if (messages.length === 0) return undefined;
  const res = await db.query<{ id: number }>(
    `insert into messages (conversation_id, position, role, content, name, turn_id)
     select $1, coalesce((select max(position) from messages where conversation_id = $1), 0) + m.ord,
            m.role, m.content, m.name, $2
     from unnest($3::text[], $4::text[], $5::text[]) with ordinality as m(role, content, name, ord)
     returning id`,
    [conversationId, turnId, messages.map((m) => m.role), messages.map((m) => m.content), messages.map((m) => m.name ?? null)],
  );
  return Math.max(...res.rows.map((r) => r.id));
}

export async function touchConversation(db: Queryable, id: string): Promise<void> {
  await db.query("update conversations set last_active_at = now() where id = $1", [id]);
}

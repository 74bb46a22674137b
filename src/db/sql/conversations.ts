import type { Queryable } from "../pool.js";

export interface StoredMessage {
  id: number;
  position: number;
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  name: string | null;
}

/** Creates the conversation if it is new; returns whether it existed. */
export async function upsertConversation(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query<{ inserted: boolean }>(
    `insert into conversations (id) values ($1)
     on conflict (id) do update set last_active_at = now()
     returning (xmax = 0) as inserted`,
    [id],
  );
  return !res.rows[0]?.inserted;
}

/** The conversation's current transcript (superseded messages left out), in order. */
export async function activeMessages(db: Queryable, conversationId: string, upToMessageId?: number): Promise<StoredMessage[]> {
  const res = await db.query<StoredMessage>(
    `select id, position, role, content, name from messages
     where conversation_id = $1 and superseded_at is null and ($2::bigint is null or id <= $2)
     order by position`,
    [conversationId, upToMessageId ?? null],
  );
  return res.rows;
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

/** Marks the conversation's active messages from `position` on as superseded. */
export async function supersedeFrom(db: Queryable, conversationId: string, position: number): Promise<void> {
  await db.query(
    `update messages set superseded_at = now()
     where conversation_id = $1 and position >= $2 and superseded_at is null`,
    [conversationId, position],
  );
}

export async function touchConversation(db: Queryable, id: string): Promise<void> {
  await db.query("update conversations set last_active_at = now() where id = $1", [id]);
}

// Coding-agent sessions and GHAP entries (migrations/000014_agent_sessions.sql).
import type { Queryable } from "../pool.js";

export interface SessionRow {
  id: string;
  agent: string;
  project: string;
  external_id: string | null;
  started_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  tool_count: number;
  tools_since_check_in: number;
}

export type GhapStatus = "active" | "confirmed" | "falsified" | "abandoned";
export type GhapOutcome = Exclude<GhapStatus, "active">;

export interface GhapRow {
  id: string;
  session_id: string;
  goal: string;
  hypothesis: string;
  action: string;
  prediction: string;
  status: GhapStatus;
  outcome_note: string | null;
  memory_id: string | null;
  created_at: Date;
  updated_at: Date;
  resolved_at: Date | null;
}

export interface GhapFields {
  goal: string;
  hypothesis: string;
  action: string;
  prediction: string;
}

const SESSION = "id::text as id, agent, project, external_id, started_at, ended_at, end_reason, tool_count, tools_since_check_in";
const GHAP =
  "g.id::text as id, g.session_id::text as session_id, g.goal, g.hypothesis, g.action, g.prediction, g.status, g.outcome_note, g.memory_id::text as memory_id, g.created_at, g.updated_at, g.resolved_at";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ends the project's open sessions (but `keep`); returns those ended. */
export async function endOpenSessions(db: Queryable, agent: string, project: string, reason: string, keep?: string): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `update agent_sessions set ended_at = now(), end_reason = $3
     where agent = $1 and project = $2 and ended_at is null and ($4::uuid is null or id <> $4::uuid) returning id::text as id`,
    [agent, project, reason, keep ?? null],
  );
  return res.rows.map((r) => r.id);
}

export async function insertSession(db: Queryable, s: { agent: string; project: string; externalId: string | null }): Promise<SessionRow> {
  const res = await db.query<SessionRow>(
    `insert into agent_sessions (agent, project, external_id) values ($1, $2, $3) returning ${SESSION}`,
    [s.agent, s.project, s.externalId],
  );
  return res.rows[0]!;
}

export async function sessionByExternalId(db: Queryable, agent: string, externalId: string): Promise<SessionRow | undefined> {
  const res = await db.query<SessionRow>(`select ${SESSION} from agent_sessions where agent = $1 and external_id = $2`, [
    agent,
    externalId,
  ]);
  return res.rows[0];
}

/** A session by Psyche's id or the agent's own id. */
export async function findSession(db: Queryable, ref: string): Promise<SessionRow | undefined> {
  const res = await db.query<SessionRow>(
    `select ${SESSION} from agent_sessions where ($1::uuid is not null and id = $1::uuid) or external_id = $2 order by started_at desc limit 1`,
    [UUID.test(ref) ? ref : null, ref],
  );
  return res.rows[0];
}

/** The most recently started open session, of the project when given. */
export async function latestOpenSession(db: Queryable, project?: string): Promise<SessionRow | undefined> {
  const res = await db.query<SessionRow>(
    `select ${SESSION} from agent_sessions where ended_at is null and ($1::text is null or project = $1) order by started_at desc, id desc limit 1`,
    [project ?? null],
  );
  return res.rows[0];
}

export async function endSession(db: Queryable, id: string, reason: string): Promise<SessionRow | undefined> {
  const res = await db.query<SessionRow>(
    `update agent_sessions set ended_at = coalesce(ended_at, now()), end_reason = coalesce(end_reason, $2) where id = $1 returning ${SESSION}`,
    [id, reason],
  );
  return res.rows[0];
}

export async function reopenSession(db: Queryable, id: string): Promise<void> {
  await db.query("update agent_sessions set ended_at = null, end_reason = null where id = $1", [id]);
}

export async function countToolUse(db: Queryable, id: string): Promise<SessionRow> {
  const res = await db.query<SessionRow>(
    `update agent_sessions set tool_count = tool_count + 1, tools_since_check_in = tools_since_check_in + 1 where id = $1 returning ${SESSION}`,
    [id],
  );
  return res.rows[0]!;
}

export async function resetCheckIn(db: Queryable, id: string): Promise<SessionRow> {
  const res = await db.query<SessionRow>(`update agent_sessions set tools_since_check_in = 0 where id = $1 returning ${SESSION}`, [id]);
  return res.rows[0]!;
}

export async function activeGhap(db: Queryable, sessionId: string): Promise<GhapRow | undefined> {
  const res = await db.query<GhapRow>(`select ${GHAP} from ghap g where g.session_id = $1 and g.status = 'active'`, [sessionId]);
  return res.rows[0];
}

export async function ghapById(db: Queryable, id: string): Promise<GhapRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const res = await db.query<GhapRow>(`select ${GHAP} from ghap g where g.id = $1`, [id]);
  return res.rows[0];
}

/** Active GHAP whose session has ended: work left open by a session that crashed or was forgotten. */
export async function orphanedGhap(
  db: Queryable,
  project: string | null,
  limit = 10,
): Promise<(GhapRow & { project: string; session_ended_at: Date })[]> {
  const res = await db.query<GhapRow & { project: string; session_ended_at: Date }>(
    `select ${GHAP}, s.project, s.ended_at as session_ended_at from ghap g join agent_sessions s on s.id = g.session_id
     where g.status = 'active' and s.ended_at is not null and ($1::text is null or s.project = $1)
     order by g.updated_at desc, g.id desc limit $2`,
    [project, limit],
  );
  return res.rows;
}

export async function insertGhap(db: Queryable, sessionId: string, f: GhapFields): Promise<GhapRow> {
  const res = await db.query<GhapRow>(
    `insert into ghap as g (session_id, goal, hypothesis, action, prediction) values ($1, $2, $3, $4, $5) returning ${GHAP}`,
    [sessionId, f.goal, f.hypothesis, f.action, f.prediction],
  );
  return res.rows[0]!;
}

/** Changes the given fields (and moves the entry to `sessionId` when given: an adopted orphan). */
export async function updateGhap(db: Queryable, id: string, f: Partial<GhapFields>, sessionId?: string): Promise<GhapRow> {
  const res = await db.query<GhapRow>(
    `update ghap as g set goal = coalesce($2, goal), hypothesis = coalesce($3, hypothesis), action = coalesce($4, action),
       prediction = coalesce($5, prediction), session_id = coalesce($6::uuid, session_id), updated_at = now()
     where g.id = $1 returning ${GHAP}`,
    [id, f.goal ?? null, f.hypothesis ?? null, f.action ?? null, f.prediction ?? null, sessionId ?? null],
  );
  return res.rows[0]!;
}

export async function resolveGhapRow(
  db: Queryable,
  id: string,
  outcome: GhapOutcome,
  note: string | null,
  memoryId: string | null,
): Promise<GhapRow | undefined> {
  const res = await db.query<GhapRow>(
    `update ghap as g set status = $2, outcome_note = $3, memory_id = $4, resolved_at = now(), updated_at = now()
     where g.id = $1 and g.status = 'active' returning ${GHAP}`,
    [id, outcome, note, memoryId],
  );
  return res.rows[0];
}

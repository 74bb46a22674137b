// Coding-agent sessions and GHAP (goal, hypothesis, action, prediction): the agent's working
// state, kept in Postgres so that the hooks (agents/hooks.ts), the MCP tools (mcp/agent-tools.ts)
// and any process see one state, and work a crashed session left open is found by the next.
// A session is found by Psyche's id or the agent's own id; without either, the latest open one.
import { projectScope } from "../scope.js";
import type { Pool } from "../db/pool.js";
import { inTransaction } from "../db/pool.js";
import {
  activeGhap,
  countToolUse,
  endOpenSessions,
  endSession,
  findSession,
  type GhapFields,
  type GhapOutcome,
  type GhapRow,
  ghapById,
  insertGhap,
  insertSession,
  latestOpenSession,
  orphanedGhap,
  reopenSession,
  resetCheckIn,
  resolveGhapRow,
  type SessionRow,
  sessionByExternalId,
  updateGhap,
} from "../db/sql/agent-sessions.js";
import { UserError } from "../errors.js";
import type { Memory } from "../memory/memory.js";

export const GHAP_TAG = "ghap";

export interface SessionRef {
  /** Psyche's session id or the agent's own. */
  session_id?: string | undefined;
  /** The project (working directory), to pick its latest open session. */
  project?: string | undefined;
}

export interface Started {
  session: SessionRow;
  /** True when the agent's session id was already known (a resumed session). */
  resumed: boolean;
  /** Open sessions of the same project this start ended. */
  ended: string[];
  orphans: Awaited<ReturnType<typeof orphanedGhap>>;
}

/** The memory a resolved GHAP becomes: what was tried, what was expected, what happened. */
export function experienceText(g: GhapFields, outcome: GhapOutcome, note: string | null): string {
  return [
    `Experience (${outcome}): goal: ${g.goal}`,
    `hypothesis: ${g.hypothesis}`,
    `action: ${g.action}`,
    `prediction: ${g.prediction}`,
    `outcome: ${outcome}${note ? `: ${note}` : ""}`,
  ].join("\n");
}

export class AgentSessions {
  constructor(private readonly deps: { pool: Pool; memory: Memory }) {}

  /** Starts (or, for a known agent session id, resumes) a session; ends the project's other open ones. */
  async start(s: { agent: string; project: string; externalId?: string | undefined }): Promise<Started> {
    const { pool } = this.deps;
    const { session, resumed, ended } = await inTransaction(pool, async (client) => {
      const known = s.externalId ? await sessionByExternalId(client, s.agent, s.externalId) : undefined;
      if (known) {
        if (known.ended_at) await reopenSession(client, known.id);
        const ended = await endOpenSessions(client, s.agent, known.project, "superseded", known.id);
        return { session: { ...known, ended_at: null, end_reason: null }, resumed: true, ended };
      }
      const ended = await endOpenSessions(client, s.agent, s.project, "superseded");
      return {
        session: await insertSession(client, { agent: s.agent, project: s.project, externalId: s.externalId ?? null }),
        resumed: false,
        ended,
      };
    });
    return { session, resumed, ended, orphans: await orphanedGhap(pool, session.project) };
  }

  /** The session a call means; a 404 that says what to do when there is none. */
  async session(ref: SessionRef): Promise<SessionRow> {
    if (ref.session_id) {
      const found = await findSession(this.deps.pool, ref.session_id);
      if (!found) throw new UserError(`No agent session '${ref.session_id}'`, { status: 404, param: "session_id" });
      return found;
    }
    const latest = await latestOpenSession(this.deps.pool, ref.project);
    if (!latest)
      throw new UserError(`No open agent session${ref.project ? ` for ${ref.project}` : ""}: call start_session first`, { status: 404 });
    return latest;
  }

  /** The session a hook means: the agent's own id, started on first sight (a hook may come before session-start did). */
  /**
   * The session a hook belongs to, started when the server never saw its session-start (it was
   * starting then: processes/hook.ts): a session started here comes with the project's orphaned
   * GHAP, for the hook to report as session-start would have.
   */
  async sessionForHook(
    agent: string,
    externalId: string | undefined,
    project: string,
  ): Promise<{ session: SessionRow; orphans: Started["orphans"] }> {
    const known = externalId
      ? await sessionByExternalId(this.deps.pool, agent, externalId)
      : await latestOpenSession(this.deps.pool, project);
    if (known) return { session: known, orphans: [] };
    const started = await this.start({ agent, project, externalId });
    return { session: started.session, orphans: started.orphans };
  }

  async end(session: SessionRow, reason: string): Promise<SessionRow> {
    return (await endSession(this.deps.pool, session.id, reason)) ?? session;
  }

  orphans(project: string | null): ReturnType<typeof orphanedGhap> {
    return orphanedGhap(this.deps.pool, project);
  }

  active(session: SessionRow): Promise<GhapRow | undefined> {
    return activeGhap(this.deps.pool, session.id);
  }

  async set(session: SessionRow, fields: GhapFields): Promise<GhapRow> {
    if (session.ended_at) throw new UserError(`Session ${session.id} has ended: start_session first`, { status: 409 });
    const current = await activeGhap(this.deps.pool, session.id);
    if (current) {
      throw new UserError(
        `Session ${session.id} already has an active GHAP (${current.id}, goal: ${current.goal}): update_ghap to change it, or resolve_ghap it first`,
        {
          status: 409,
          code: "ghap_active",
        },
      );
    }
    return insertGhap(this.deps.pool, session.id, fields).catch((err: unknown) => {
      // Two sets at once: the unique index keeps one.
      if ((err as { code?: string }).code === "23505")
        throw new UserError(`Session ${session.id} already has an active GHAP`, { status: 409, code: "ghap_active" });
      throw err;
    });
  }

  /** The entry `id` names, or the session's active one. */
  async target(id: string | undefined, ref: SessionRef): Promise<{ ghap: GhapRow; session: SessionRow | undefined }> {
    if (id) {
      const ghap = await ghapById(this.deps.pool, id);
      if (!ghap) throw new UserError(`No GHAP '${id}'`, { status: 404, param: "id" });
      // The session that acts on it, if any (an orphan updated from it is adopted).
      const session = await this.session(ref).catch(() => undefined);
      return { ghap, session };
    }
    const session = await this.session(ref);
    const ghap = await activeGhap(this.deps.pool, session.id);
    if (!ghap)
      throw new UserError(
        `Session ${session.id} has no active GHAP: set_ghap first (or get_orphaned_ghap for one a past session left open)`,
        { status: 404 },
      );
    return { ghap, session };
  }

  /** Changes an active entry. An orphan updated from an open session is adopted by it. */
  async update(id: string | undefined, ref: SessionRef, fields: Partial<GhapFields>): Promise<{ ghap: GhapRow; adopted: boolean }> {
    const { ghap, session } = await this.target(id, ref);
    if (ghap.status !== "active") throw new UserError(`GHAP ${ghap.id} is already ${ghap.status}`, { status: 409 });
    const owner = await findSession(this.deps.pool, ghap.session_id);
    const adopt = owner?.ended_at != null && session !== undefined && session.ended_at === null && session.id !== ghap.session_id;
    if (adopt && (await activeGhap(this.deps.pool, session.id))) {
      throw new UserError(`Session ${session.id} already has an active GHAP: resolve it before adopting ${ghap.id}`, {
        status: 409,
        code: "ghap_active",
      });
    }
    return { ghap: await updateGhap(this.deps.pool, ghap.id, fields, adopt ? session.id : undefined), adopted: adopt };
  }

  /** Closes an entry with its outcome and remembers it as experience (a semantic memory tagged ghap). */
  async resolve(
    id: string | undefined,
    ref: SessionRef,
    outcome: GhapOutcome,
    note: string | null,
    signal?: AbortSignal,
  ): Promise<GhapRow> {
    const { ghap, session } = await this.target(id, ref);
    if (ghap.status !== "active") throw new UserError(`GHAP ${ghap.id} is already ${ghap.status}`, { status: 409 });
    const { memory } = await this.deps.memory.remember({
      kind: "semantic",
      content: experienceText(ghap, outcome, note),
      tags: [GHAP_TAG, outcome],
      sourceKind: "ghap",
      sourceId: ghap.id,
      // An agent's experience stays with its project (src/scope.ts), as its hooks read it.
      scope: projectScope(session?.project),
      signal,
    });
    const resolved = await resolveGhapRow(this.deps.pool, ghap.id, outcome, note, memory.id);
    if (!resolved) throw new UserError(`GHAP ${ghap.id} was resolved meanwhile`, { status: 409 });
    return resolved;
  }

  countToolUse(session: SessionRow): Promise<SessionRow> {
    return countToolUse(this.deps.pool, session.id);
  }

  resetCheckIn(session: SessionRow): Promise<SessionRow> {
    return resetCheckIn(this.deps.pool, session.id);
  }
}

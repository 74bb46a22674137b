// MCP tools for coding agents' working state (agents/sessions.ts): sessions, the GHAP entry
// (goal, hypothesis, action, prediction) and its check-ins. Hooks call some of them for the
// agent (agents/hooks.ts); the agent calls the rest itself. A call names its session by id
// (Psyche's or the agent's own) or by project; without either, the latest open session.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { GhapRow, SessionRow } from "../db/sql/agent-sessions.js";
import type { WebServices } from "../web-services.js";
import { guarded, result } from "./result.js";

export const SessionIdSchema = z.string().trim().min(1).max(256);
export const ProjectSchema = z.string().trim().min(1).max(4096);
/** The project a session belongs to when the agent names none (the tools' own table takes no argument). */
export const DEFAULT_PROJECT = "default";
const field = z.string().trim().min(1).max(4000);
const sessionRef = {
  session_id: SessionIdSchema.optional().describe(
    "Psyche's session id (from start_session) or the agent's own; default the latest open session",
  ),
  project: ProjectSchema.optional().describe("Or: the latest open session of this project (working directory)"),
};

export const sessionJson = (s: SessionRow) => ({
  session_id: s.id,
  agent: s.agent,
  project: s.project,
  external_id: s.external_id,
  started_at: s.started_at,
  ended_at: s.ended_at,
  tool_count: s.tool_count,
  tools_since_check_in: s.tools_since_check_in,
});

export const ghapJson = (g: GhapRow) => ({
  id: g.id,
  session_id: g.session_id,
  goal: g.goal,
  hypothesis: g.hypothesis,
  action: g.action,
  prediction: g.prediction,
  status: g.status,
  outcome_note: g.outcome_note,
  memory_id: g.memory_id,
  created_at: g.created_at,
  updated_at: g.updated_at,
  resolved_at: g.resolved_at,
});

export const ghapText = (g: GhapRow) =>
  `GHAP ${g.id} (${g.status}):\n- goal: ${g.goal}\n- hypothesis: ${g.hypothesis}\n- action: ${g.action}\n- prediction: ${g.prediction}` +
  (g.outcome_note ? `\n- outcome: ${g.outcome_note}` : "");

export function registerAgentTools(server: McpServer, deps: WebServices): void {
  const agents = deps.agents;

  server.registerTool(
    "start_session",
    {
      title: "Start an agent session",
      description:
        "Start a coding-agent session for a project. Ends the project's previous open session; returns the new session's id and any GHAP a past session left active (orphans: adopt one with update_ghap, or close it with resolve_ghap). Without a project the session belongs to the project named \"default\".",
      inputSchema: {
        project: ProjectSchema.optional().describe(`The project: its working directory; default "${DEFAULT_PROJECT}"`),
        agent: z.string().trim().min(1).max(64).default("mcp").describe("Which agent (e.g. claude-code)"),
        external_id: SessionIdSchema.optional().describe("The agent's own session id; a known one resumes that session"),
      },
    },
    guarded("start_session", deps.log, async ({ project, agent, external_id }) => {
      const started = await agents.start({ agent, project: project ?? DEFAULT_PROJECT, externalId: external_id });
      const orphans = started.orphans.map((o) => ({ ...ghapJson(o), project: o.project, session_ended_at: o.session_ended_at }));
      const text = [
        `${started.resumed ? "Resumed" : "Started"} session ${started.session.id} for ${project === undefined ? `the default project "${DEFAULT_PROJECT}" (no project was named)` : started.session.project}.`,
        ...(started.ended.length ? [`Ended ${started.ended.length} earlier open session(s) of this project.`] : []),
        ...(orphans.length
          ? ["Active GHAP left by an ended session (adopt with update_ghap, or resolve_ghap):", ...started.orphans.map(ghapText)]
          : []),
      ].join("\n");
      return result({ ...sessionJson(started.session), resumed: started.resumed, ended_sessions: started.ended, orphans }, text);
    }),
  );

  server.registerTool(
    "get_orphaned_ghap",
    {
      title: "Orphaned GHAP",
      description: "Active GHAP entries whose session has ended (crashed or forgotten), newest first, of one project or all.",
      inputSchema: { project: ProjectSchema.optional() },
      annotations: { readOnlyHint: true },
    },
    guarded("get_orphaned_ghap", deps.log, async ({ project }) => {
      const orphans = await agents.orphans(project ?? null);
      const text = orphans.length
        ? orphans.map((o) => `${ghapText(o)}\n- from a session of ${o.project} that ended ${o.session_ended_at.toISOString()}`).join("\n\n")
        : "No orphaned GHAP.";
      return result(
        {
          has_orphan: orphans.length > 0,
          orphans: orphans.map((o) => ({ ...ghapJson(o), project: o.project, session_ended_at: o.session_ended_at })),
        },
        text,
      );
    }),
  );

  server.registerTool(
    "set_ghap",
    {
      title: "Set the working hypothesis",
      description:
        "Record what you are doing as a GHAP: the goal, your hypothesis, the action that tests it, and what you predict. One active GHAP per session.",
      inputSchema: { goal: field, hypothesis: field, action: field, prediction: field, ...sessionRef },
    },
    guarded("set_ghap", deps.log, async ({ goal, hypothesis, action, prediction, session_id, project }) => {
      const session = await agents.session({ session_id, project });
      const ghap = await agents.set(session, { goal, hypothesis, action, prediction });
      return result(ghapJson(ghap), `Set ${ghapText(ghap)}`);
    }),
  );

  server.registerTool(
    "update_ghap",
    {
      title: "Update the working hypothesis",
      description:
        "Change fields of the active GHAP (or of the one `id` names). Updating an orphan from an open session adopts it into that session.",
      inputSchema: {
        id: z.string().uuid().optional().describe("The GHAP to update; default the session's active one"),
        goal: field.optional(),
        hypothesis: field.optional(),
        action: field.optional(),
        prediction: field.optional(),
        ...sessionRef,
      },
    },
    guarded("update_ghap", deps.log, async ({ id, session_id, project, ...fields }) => {
      const { ghap, adopted } = await agents.update(id, { session_id, project }, fields);
      return result({ ...ghapJson(ghap), adopted }, `${adopted ? "Adopted and updated" : "Updated"} ${ghapText(ghap)}`);
    }),
  );

  server.registerTool(
    "resolve_ghap",
    {
      title: "Resolve the working hypothesis",
      description:
        "Close the active GHAP (or the one `id` names) with its outcome: confirmed, falsified or abandoned, and a note on what happened. It is remembered as experience and offered in later contexts.",
      inputSchema: {
        outcome: z.enum(["confirmed", "falsified", "abandoned"]),
        note: z.string().trim().min(1).max(4000).optional().describe("What happened; why it was abandoned"),
        id: z.string().uuid().optional(),
        ...sessionRef,
      },
    },
    guarded("resolve_ghap", deps.log, async ({ outcome, note, id, session_id, project }, extra) => {
      const ghap = await agents.resolve(id, { session_id, project }, outcome, note ?? null, extra.signal);
      return result(ghapJson(ghap), `Resolved ${ghapText(ghap)}\nRemembered as memory ${ghap.memory_id}.`);
    }),
  );

  server.registerTool(
    "get_active_ghap",
    {
      title: "The active GHAP",
      description: "The session's active GHAP, if any.",
      inputSchema: { ...sessionRef },
      annotations: { readOnlyHint: true },
    },
    guarded("get_active_ghap", deps.log, async ({ session_id, project }) => {
      const session = await agents.session({ session_id, project });
      const ghap = await agents.active(session);
      return result(
        { session_id: session.id, has_active: ghap !== undefined, ghap: ghap ? ghapJson(ghap) : null },
        ghap ? ghapText(ghap) : `Session ${session.id} has no active GHAP.`,
      );
    }),
  );

  server.registerTool(
    "increment_tool_count",
    {
      title: "Count a tool use",
      description: "Count one tool use in the session (the pre-tool-use hook calls this).",
      inputSchema: { ...sessionRef },
    },
    guarded("increment_tool_count", deps.log, async ({ session_id, project }) => {
      const s = await agents.countToolUse(await agents.session({ session_id, project }));
      return result(
        { session_id: s.id, tool_count: s.tools_since_check_in, total: s.tool_count },
        `${s.tools_since_check_in} tool uses since the last check-in (${s.tool_count} in the session).`,
      );
    }),
  );

  server.registerTool(
    "should_check_in",
    {
      title: "Is a GHAP check-in due?",
      description: "True when `frequency` or more tools were used since the last check-in.",
      inputSchema: { frequency: z.number().int().min(1).max(1000).default(10), ...sessionRef },
      annotations: { readOnlyHint: true },
    },
    guarded("should_check_in", deps.log, async ({ frequency, session_id, project }) => {
      const s = await agents.session({ session_id, project });
      const due = s.tools_since_check_in >= frequency;
      return result(
        { session_id: s.id, should_check_in: due, tool_count: s.tools_since_check_in, frequency },
        due ? `Check-in due: ${s.tools_since_check_in} tool uses since the last.` : `Not yet: ${s.tools_since_check_in} of ${frequency}.`,
      );
    }),
  );

  server.registerTool(
    "reset_tool_count",
    {
      title: "Reset the check-in count",
      description: "Start counting tool uses toward the next check-in from zero (the session's total stays).",
      inputSchema: { ...sessionRef },
    },
    guarded("reset_tool_count", deps.log, async ({ session_id, project }) => {
      const s = await agents.resetCheckIn(await agents.session({ session_id, project }));
      return result({ session_id: s.id, tool_count: 0, total: s.tool_count }, "Check-in count reset.");
    }),
  );
}

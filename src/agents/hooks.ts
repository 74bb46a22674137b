// What each coding-agent hook does in the server (POST /hooks/<event>, and `psyche hook <event>`,
// which relays to it): the agent's session and GHAP (agents/sessions.ts), the context for a
// prompt (memory/assemble-context.ts), the GHAP check-in every N tool uses, and test outcomes
// turned into a suggested resolution. Each answers with a typed result (agents/hook-input.ts, HookResult); hook-output.ts
// renders it for Claude Code.
import { projectScope, readableScopes } from "../scope.js";
import type { GhapRow } from "../db/sql/agent-sessions.js";
import { assembleContext } from "../memory/assemble-context.js";
import type { Memory } from "../memory/memory.js";
import type { HookEvent, HookInput, HookResult } from "./hook-input.js";
import type { AgentSessions } from "./sessions.js";
import { testOutcome } from "./test-outcome.js";

export interface HookSettings {
  /** Tool uses between GHAP check-ins. */
  checkInEvery: number;
  /** The prompt context's token budget. */
  maxTokens: number;
}

export const DEFAULT_HOOK_SETTINGS: HookSettings = { checkInEvery: 10, maxTokens: 1500 };

export interface HookDeps {
  agents: AgentSessions;
  memory: Memory;
  settings: HookSettings;
}

const DEFAULT_AGENT = "claude-code";
const projectOf = (input: { cwd?: string | undefined }) => input.cwd ?? "(unknown project)";
const ghapBlock = (g: GhapRow) =>
  `**Goal**: ${g.goal}\n**Hypothesis**: ${g.hypothesis}\n**Action**: ${g.action}\n**Prediction**: ${g.prediction}`;

/** What a session is told of the GHAP past sessions of its project left open. */
function orphanReport(orphans: readonly GhapRow[]): string {
  return [
    "## Orphaned GHAP detected",
    "",
    `A past session of this project ended with this hypothesis still open (GHAP ${orphans[0]!.id}):`,
    "",
    ghapBlock(orphans[0]!),
    "",
    "Adopt it and continue (update_ghap with its id), or close it (resolve_ghap with its id, outcome abandoned and a reason).",
    ...(orphans.length > 1 ? [`${orphans.length - 1} more: get_orphaned_ghap lists them.`] : []),
  ].join("\n");
}

/**
 * A hook's result, with the orphan report when this hook opened the session (the first to reach
 * the server, session-start having found it still starting): before the hook's own content.
 */
function withOrphans(result: HookResult, opened: { session: { id: string }; orphans: readonly GhapRow[] }): HookResult {
  if (!opened.orphans.length) return result;
  const report = orphanReport(opened.orphans);
  if ("content" in result && result.content) return { ...result, content: `${report}\n\n${result.content}` } as HookResult;
  return { type: "orphan_detected", session_id: opened.session.id, content: report, orphans: opened.orphans.map((o) => o.id) };
}

export async function runHook<E extends HookEvent>(
  deps: HookDeps,
  event: E,
  input: HookInput<E>,
  signal?: AbortSignal,
): Promise<HookResult> {
  const agent = input.agent ?? DEFAULT_AGENT;
  const project = projectOf(input);
  const { agents } = deps;
  switch (event) {
    case "session-start": {
      const started = await agents.start({ agent, project, externalId: input.session_id });
      const id = started.session.id;
      if (started.orphans.length)
        return {
          type: "orphan_detected",
          session_id: id,
          content: orphanReport(started.orphans),
          orphans: started.orphans.map((o) => o.id),
        };
      const content =
        `Psyche (long-term memory) is following this session as ${id}. ` +
        "Before a change you are unsure of, record your goal, hypothesis, action and prediction with set_ghap; resolve_ghap when it is confirmed, falsified or abandoned.";
      return { type: "session_started", session_id: id, resumed: started.resumed, content };
    }
    case "user-prompt-submit": {
      const i = input as HookInput<"user-prompt-submit">;
      const opened = await agents.sessionForHook(agent, i.session_id, project);
      const { session } = opened;
      const assembled = await assembleContext(deps.memory, {
        query: i.prompt.slice(0, 20_000),
        maxTokens: deps.settings.maxTokens,
        limit: 10,
        activeGhap: await agents.active(session),
        signal,
        // The project's own memories and default's, never another project's.
        scopes: readableScopes(projectScope(input.cwd)),
      });
      if (!assembled.markdown) return withOrphans({ type: "none", reason: "nothing relevant" }, opened);
      return withOrphans({ type: "rich", content: assembled.markdown, token_count: assembled.token_estimate }, opened);
    }
    case "pre-tool-use": {
      const opened = await agents.sessionForHook(agent, input.session_id, project);
      const session = await agents.countToolUse(opened.session);
      if (session.tools_since_check_in < deps.settings.checkInEvery)
        return withOrphans({ type: "none", reason: `${session.tools_since_check_in} of ${deps.settings.checkInEvery} tool uses` }, opened);
      await agents.resetCheckIn(session);
      const ghap = await agents.active(session);
      const n = session.tools_since_check_in;
      const content = ghap
        ? `## GHAP check-in (${n} tool uses since the last)\n\n${ghapBlock(ghap)}\n\nIs the hypothesis still holding? If it changed, update_ghap; if it is settled, resolve_ghap.`
        : `## GHAP check-in (${n} tool uses since the last)\n\nNo working hypothesis is recorded for this session. If you are testing an idea, set_ghap with its goal, hypothesis, action and prediction.`;
      return withOrphans({ type: "reminder", content, tool_count: n }, opened);
    }
    case "post-tool-use": {
      const i = input as HookInput<"post-tool-use">;
      const outcome = testOutcome(i.tool_name, i.tool_input, i.tool_response);
      if (!outcome) return { type: "none", reason: "not a test run" };
      const opened = await agents.sessionForHook(agent, i.session_id, project);
      const ghap = await agents.active(opened.session);
      const head = `## Tests ${outcome.passed ? "PASSED" : "FAILED"}\n\n\`${outcome.command.slice(0, 200)}\`: ${outcome.evidence}`;
      if (!ghap) {
        return withOrphans(
          {
            type: "outcome",
            passed: outcome.passed,
            suggested_action: "set_ghap",
            content: `${head}\n\nNo working hypothesis is recorded; set_ghap if this run tests one.`,
          },
          opened,
        );
      }
      const action = outcome.passed ? "resolve_confirmed" : "resolve_falsified";
      const advice = outcome.passed
        ? `If this confirms the prediction ("${ghap.prediction}"), resolve_ghap with outcome confirmed.`
        : `If this contradicts the prediction ("${ghap.prediction}"), resolve_ghap with outcome falsified and what you learned; if the run was not the test of it, carry on.`;
      return {
        type: "outcome",
        passed: outcome.passed,
        suggested_action: action,
        content: `${head}\n\nActive GHAP ${ghap.id}:\n${ghapBlock(ghap)}\n\n${advice}`,
      };
    }
    case "session-end": {
      const i = input as HookInput<"session-end">;
      const { session } = await agents.sessionForHook(agent, i.session_id, project);
      await agents.end(session, i.reason ?? "ended");
      return { type: "session_ended", session_id: session.id };
    }
  }
  throw new Error(`unknown hook event ${String(event)}`);
}

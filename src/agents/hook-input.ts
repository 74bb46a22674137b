// What coding agents send their hooks (Claude Code's hook input on stdin, or the body of an
// HTTP hook): the fields Psyche reads, each optional but the event's own, and everything else
// kept and ignored, as agents add fields over time.
import { z } from "zod";

import { type HookEvent } from "./hook-events.js";

export { HOOK_EVENTS, CLAUDE_EVENT_NAMES, type HookEvent } from "./hook-events.js";

const Common = z
  .object({
    session_id: z.string().trim().min(1).max(256).optional(),
    cwd: z.string().trim().min(1).max(4096).optional(),
    hook_event_name: z.string().max(64).optional(),
    /** Who is calling: Claude Code unless said otherwise (other agents may send their name). */
    agent: z.string().trim().min(1).max(64).optional(),
  })
  .passthrough();

export const HookInputSchemas = {
  "session-start": Common.extend({ source: z.string().max(64).optional() }),
  "user-prompt-submit": Common.extend({ prompt: z.string().max(200_000) }),
  "pre-tool-use": Common.extend({ tool_name: z.string().min(1).max(256), tool_input: z.unknown().optional() }),
  "post-tool-use": Common.extend({
    tool_name: z.string().min(1).max(256),
    tool_input: z.unknown().optional(),
    tool_response: z.unknown().optional(),
  }),
  "session-end": Common.extend({ reason: z.string().max(64).optional() }),
} satisfies Record<HookEvent, z.ZodTypeAny>;

export type HookInput<E extends HookEvent> = z.infer<(typeof HookInputSchemas)[E]>;

/** The typed results of the hooks, one type per event (`--format typed`). */
export type HookResult =
  | { type: "session_started"; session_id: string; resumed: boolean; content: string }
  | { type: "orphan_detected"; session_id: string; content: string; orphans: string[] }
  | { type: "rich"; content: string; token_count: number }
  | { type: "reminder"; content: string; tool_count: number }
  | { type: "outcome"; content: string; passed: boolean; suggested_action: "resolve_confirmed" | "resolve_falsified" | "set_ghap" }
  | { type: "session_ended"; session_id: string }
  | { type: "none"; reason: string }
  | { type: "degraded"; reason: string };

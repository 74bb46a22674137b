// The hook events and their Claude Code names, free of other imports: the hook relay
// (processes/hook.ts) starts a new process per call and must load little.
export const HOOK_EVENTS = ["session-start", "user-prompt-submit", "pre-tool-use", "post-tool-use", "session-end"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Claude Code's names for the events (its settings' keys and `hookEventName`). */
export const CLAUDE_EVENT_NAMES: Record<HookEvent, string> = {
  "session-start": "SessionStart",
  "user-prompt-submit": "UserPromptSubmit",
  "pre-tool-use": "PreToolUse",
  "post-tool-use": "PostToolUse",
  "session-end": "SessionEnd",
};

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

/**
 * How long `psyche hook user-prompt-submit` waits for a server that is starting, by default
 * (processes/hook.ts): a first start makes the default model and the database. Then the first
 * answer of a server that has just started, which loads its embedder, may take longer than a
 * warm one's.
 */
export const HOOK_WAIT_MS = 30_000;
export const HOOK_FIRST_ANSWER_MS = 10_000;

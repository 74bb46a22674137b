// A hook's typed result (agents/hook-input.ts) as Claude Code reads it: JSON with
// `hookSpecificOutput.additionalContext`, which Claude Code adds to the model's context, for the
// events that take it; an empty object (no effect) for the rest. Nothing here ever asks Claude
// Code to block, deny or stop: Psyche only adds context.
import { CLAUDE_EVENT_NAMES, type HookEvent } from "./hook-events.js";
import type { HookResult } from "./hook-input.js";

export type ClaudeHookOutput = { hookSpecificOutput?: { hookEventName: string; additionalContext: string } };

export function claudeOutput(event: HookEvent, result: HookResult): ClaudeHookOutput {
  if (event === "session-end" || !("content" in result) || !result.content) return {};
  return { hookSpecificOutput: { hookEventName: CLAUDE_EVENT_NAMES[event], additionalContext: result.content } };
}

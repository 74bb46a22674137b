// Scopes keep memories apart (docs/memory-and-mood.md): a project, a person, a client. A request
// names one (X-Psyche-Scope, ?scope=, an MCP tool's `scope`; a coding agent's hooks use the
// project's path); without one it is in `default`. Every scope also reads `default`.
import { z } from "zod";
import { invalidRequest } from "./errors.js";

export const DEFAULT_SCOPE = "default";

/** A scope's name: printable (a project's path is one), at most 256 characters. */
export const ScopeSchema = z
  .string()
  .trim()
  .min(1, "a scope is 1-256 printable characters")
  .max(256, "a scope is 1-256 printable characters")
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  .regex(/^[^\u0000-\u001f\u007f]+$/, "a scope is 1-256 printable characters");

/** What a request in `scope` reads: its own memories and default's. */
export function readableScopes(scope: string): string[] {
  return scope === DEFAULT_SCOPE ? [DEFAULT_SCOPE] : [scope, DEFAULT_SCOPE];
}

/**
 * The scope a request names, from its X-Psyche-Scope header or its ?scope= (for a name a header
 * cannot carry, such as a path with non-ASCII letters); undefined when it names none.
 */
export function scopeNamed(header: string | undefined, query: string | undefined): string | undefined {
  const raw = header ?? query;
  if (raw === undefined) return undefined;
  const parsed = ScopeSchema.safeParse(raw);
  if (!parsed.success) throw invalidRequest(`scope: ${parsed.error.issues[0]!.message}`, "scope", "invalid_value");
  return parsed.data;
}

/** A coding agent's project directory as its scope (its hooks name it); default when unknown. */
export function projectScope(project: string | undefined | null): string {
  const parsed = ScopeSchema.safeParse(project ?? "");
  return project && parsed.success && project !== "(unknown project)" ? parsed.data : DEFAULT_SCOPE;
}

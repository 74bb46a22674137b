// The scope an MCP tool call acts in: its `scope` argument, else the request's (mcp/server.ts),
// never one outside what the request's API key may open.
import { UserError } from "../errors.js";
import { DEFAULT_SCOPE } from "../scope.js";

export interface McpScope {
  /** The request's scope. */
  scope: string;
  /** What its API key may open; null: every scope. */
  allowed: readonly string[] | null;
}

export const EVERY_SCOPE: McpScope = { scope: DEFAULT_SCOPE, allowed: null };

/** `named` (a tool's argument, or a project's path) or the request's scope; refused outside the key's. */
export function scopeFor(access: McpScope, named: string | undefined): string {
  const scope = named ?? access.scope;
  if (access.allowed && !access.allowed.includes(scope))
    throw new UserError(`this API key is bound to the scopes ${access.allowed.join(", ")}, not ${JSON.stringify(scope)}`, {
      status: 403,
      param: "scope",
    });
  return scope;
}

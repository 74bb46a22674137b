// The scope a request is in (src/scope.ts), read from a route's context: the one it names
// (X-Psyche-Scope, ?scope=), within what its API key may open (src/api-keys.ts). A key bound to
// scopes is in its first by default, may name only its own, and reads only them and default;
// the server's settings (/dream/config, /dream/dnd) are closed to it.
import type { Context, Next } from "hono";
import { UserError } from "../errors.js";
import { DEFAULT_SCOPE, readableScopes, scopeNamed } from "../scope.js";
import { turnScope } from "../db/sql/conversations.js";
import type { WebServices } from "../web-services.js";

declare module "hono" {
  interface ContextVariableMap {
    /** The scopes the request's API key may open; null or unset: every scope. */
    keyScopes: readonly string[] | null;
  }
}

/** The scopes the request's API key may open, or null for every scope. */
export const keyScopes = (c: Context): readonly string[] | null => c.get("keyScopes") ?? null;

const outOfKey = (scope: string, allowed: readonly string[]) =>
  new UserError(`this API key is bound to the scopes ${allowed.map((s) => JSON.stringify(s)).join(", ")}, not ${JSON.stringify(scope)}`, {
    status: 403,
    param: "scope",
    code: "scope_not_allowed",
  });

/** The scope the request names, or undefined when it names none. Refused (403) outside its key's scopes. */
export function namedScope(c: Context): string | undefined {
  const named = scopeNamed(c.req.header("x-psyche-scope"), c.req.query("scope"));
  const allowed = keyScopes(c);
  if (named !== undefined && allowed && !allowed.includes(named)) throw outOfKey(named, allowed);
  return named;
}

/** The request's scope: the one it names, else its key's first, else default. */
export const requestScope = (c: Context): string => namedScope(c) ?? keyScopes(c)?.[0] ?? DEFAULT_SCOPE;

/** What the request reads: its scope and default's, within its key's scopes (which always read default). */
export const readableFor = (c: Context): string[] => readableScopes(requestScope(c));

/**
 * What a request sees on a route that spans scopes (the event stream, the dream journal and
 * state): the scope it names, or its bound key's, with default; null (everything) for a key
 * that opens every scope and names none.
 */
export const visibleScopes = (c: Context): string[] | null =>
  namedScope(c) === undefined && keyScopes(c) === null ? null : readableFor(c);

/** A scope a request's content names (an import line, a hook's project): refused outside its key's scopes. */
export function checkScope(c: Context, scope: string): string {
  const allowed = keyScopes(c);
  if (allowed && !allowed.includes(scope)) throw outOfKey(scope, allowed);
  return scope;
}

/** Middleware: refuses a key bound to scopes on a route for the whole server (its settings). */
export async function serverRoute(c: Context, next: Next): Promise<void> {
  if (keyScopes(c))
    throw new UserError(`${c.req.path} is the whole server's: it needs an API key that opens every scope`, {
      status: 403,
      code: "scope_not_allowed",
    });
  await next();
}

/** Middleware: a turn (or response) of a conversation outside a bound key's scopes is not there for it. */
export function turnInKeyScopes(deps: Pick<WebServices, "pool">, idOf: (c: Context) => string) {
  return async (c: Context, next: Next): Promise<void> => {
    const allowed = keyScopes(c);
    if (allowed) {
      const scope = await turnScope(deps.pool, idOf(c)).catch(() => undefined);
      if (scope !== undefined && ![...allowed, DEFAULT_SCOPE].includes(scope))
        throw new UserError(`No turn ${c.req.param("id")}`, { status: 404, code: "not_found" });
    }
    await next();
  };
}

// The scope a request names (src/scope.ts), read from a route's context.
import type { Context } from "hono";
import { DEFAULT_SCOPE, scopeNamed } from "../scope.js";

/** The scope the request names, or undefined when it names none. */
export const namedScope = (c: Context): string | undefined => scopeNamed(c.req.header("x-psyche-scope"), c.req.query("scope"));

/** The request's scope: the one it names, else default. */
export const requestScope = (c: Context): string => namedScope(c) ?? DEFAULT_SCOPE;

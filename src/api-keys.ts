// API keys (docs/configuration.md): --api-key opens every scope; --api-keys holds more keys, each
// open to every scope or bound to some ("KEY=scope1,scope2"), so a key for one person or project
// reads only its own scopes' memories (src/scope.ts).
import { ScopeSchema } from "./scope.js";

export interface ApiKey {
  key: string;
  /** The scopes it may name, the first its default; null: every scope. */
  scopes: string[] | null;
}

/** Parses "KEY KEY=scope1,scope2 ..." (space-separated); throws an Error saying what is wrong, never echoing a key. */
export function parseApiKeys(spec: string): ApiKey[] {
  const keys: ApiKey[] = [];
  for (const [i, entry] of spec.split(/\s+/).filter(Boolean).entries()) {
    const eq = entry.indexOf("=");
    const key = eq === -1 ? entry : entry.slice(0, eq);
    if (key.length < 8) throw new Error(`key ${i + 1} must be at least 8 characters`);
    if (keys.some((k) => k.key === key)) throw new Error(`key ${i + 1} is given twice`);
    if (eq === -1) {
      keys.push({ key, scopes: null });
      continue;
    }
    const scopes = entry
      .slice(eq + 1)
      .split(",")
      .filter(Boolean);
    if (!scopes.length) throw new Error(`key ${i + 1} names no scope after '='`);
    for (const s of scopes) {
      if (!ScopeSchema.safeParse(s).success) throw new Error(`key ${i + 1}: ${JSON.stringify(s.slice(0, 40))} is not a scope`);
    }
    keys.push({ key, scopes: [...new Set(scopes)] });
  }
  return keys;
}

/** The key a request presents (Authorization: Bearer, or Anthropic's x-api-key), if it is one of `keys`. */
export function presentedKey(keys: readonly ApiKey[], authorization: string | undefined, xApiKey: string | undefined): ApiKey | undefined {
  const bearer = authorization?.startsWith("Bearer ") ? authorization.slice(7) : undefined;
  return keys.find((k) => k.key === bearer || k.key === xApiKey);
}

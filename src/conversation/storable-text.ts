// Postgres keeps no NUL character in text or jsonb: a request whose stored parts hold one would
// fail in its storing statement as the server's error (a 500). Refused first, naming the field,
// as any other bad input (docs/api.md).
import { invalidRequest } from "../errors.js";
import type { TurnRequest } from "./turn-request.js";

const NUL = "\u0000";

const hasNul = (text: string | null | undefined): boolean => typeof text === "string" && text.includes(NUL);

/** Throws a 400 naming the field where a part of the turn that is stored holds a NUL character. */
export function checkStorableTurn(request: TurnRequest): void {
  for (const [i, m] of request.messages.entries()) {
    const calls = m.toolCalls ?? [];
    if (
      hasNul(m.content) ||
      hasNul(m.name) ||
      hasNul(m.toolCallId) ||
      calls.some((c) => hasNul(c.id) || hasNul(c.name) || hasNul(c.arguments))
    )
      throw refused(`messages[${i}]`);
  }
  if (hasNul(request.instructions)) throw refused("instructions");
  if (request.sampling.stop.some(hasNul)) throw refused("stop");
  // Stored as jsonb: a NUL in any string or key, not the six characters `\u0000` a description may quote.
  if (request.tools?.length && holdsNul(request.tools)) throw refused("tools");
  if (request.responseFormat && holdsNul(request.responseFormat)) throw refused("response_format");
}

function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes(NUL);
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === "object") return Object.entries(value).some(([k, v]) => k.includes(NUL) || holdsNul(v));
  return false;
}

/** As checkStorableTurn, for a text completion's prompt and suffix. */
export function checkStorableText(field: string, text: string | null | undefined): void {
  if (hasNul(text)) throw refused(field);
}

const refused = (field: string) =>
  invalidRequest(
    `${field} contains a NUL character (\\u0000), which Psyche cannot store: remove it and send the request again`,
    field,
    "invalid_value",
  );

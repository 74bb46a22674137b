// Postgres keeps no NUL character in text or jsonb: a request whose stored parts hold one would
// fail in its storing statement as the server's error (a 500). Refused first, naming the field,
// as any other bad input (docs/api.md).
import { holdsNul } from "../db/nul.js";
import { invalidRequest } from "../errors.js";
import type { TurnRequest } from "./turn-request.js";

/** Throws a 400 naming the field where a part of the turn that is stored holds a NUL character. */
export function checkStorableTurn(request: TurnRequest): void {
  for (const [i, m] of request.messages.entries()) {
    const calls = m.toolCalls ?? [];
    if (
      holdsNul(m.content) ||
      holdsNul(m.name) ||
      holdsNul(m.toolCallId) ||
      calls.some((c) => holdsNul(c.id) || holdsNul(c.name) || holdsNul(c.arguments))
    )
      throw refused(`messages[${i}]`);
  }
  if (holdsNul(request.instructions)) throw refused("instructions");
  if (request.sampling.stop.some(holdsNul)) throw refused("stop");
  // Stored as jsonb: a NUL in any string or key, not the six characters `\u0000` a description may quote.
  if (request.tools?.length && holdsNul(request.tools)) throw refused("tools");
  if (request.responseFormat && holdsNul(request.responseFormat)) throw refused("response_format");
}

/** As checkStorableTurn, for a text completion's prompt and suffix. */
export function checkStorableText(field: string, text: string | null | undefined): void {
  if (holdsNul(text)) throw refused(field);
}

const refused = (field: string) =>
  invalidRequest(
    `${field} contains a NUL character (\\u0000), which Psyche cannot store: remove it and send the request again`,
    field,
    "invalid_value",
  );

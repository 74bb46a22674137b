// What a request may carry besides what Psyche reads. Clients add fields faster than servers
// learn them, and a coding agent's turn must not fail on one it could do without, so a field
// Psyche does not know is ignored and named (the X-Psyche-Ignored-Fields header, a log line,
// psyche_ignored_request_fields_total), or refused under --strict-params. Reasoning controls
// are read where the route knows them (http/thinking.ts; named as ignored where the model does
// not think, conversation/open-turn.ts), and another API's are ignored and named, even under
// --strict-params. A field the API defines that would change the reply and that Psyche cannot
// honour is a 400 naming it.
import type { Context } from "hono";
import type { Logger } from "../log.js";
import { invalidRequest } from "../errors.js";

export const IGNORED_FIELDS_HEADER = "X-Psyche-Ignored-Fields";
/** Reasoning controls of the APIs Psyche speaks (OpenAI chat, OpenAI responses, Anthropic). */
export const REASONING_FIELDS: ReadonlySet<string> = new Set(["reasoning_effort", "reasoning", "thinking"]);

export interface FieldRules {
  /** The fields the route reads (its schema's shape). */
  known: Readonly<Record<string, unknown>>;
  /** Fields the API defines that Psyche cannot honour, and why. */
  notHonoured: Readonly<Record<string, string>>;
}

/**
 * The body's fields to ignore (unknown ones, and other APIs' reasoning controls), after refusing, by name,
 * a field that cannot be honoured (set to anything but null, undefined or false) and, under
 * `strict`, an unknown one.
 */
export function fieldsToIgnore(body: Record<string, unknown>, rules: FieldRules, strict: boolean): string[] {
  const ignored: string[] = [];
  for (const [field, value] of Object.entries(body)) {
    if (field in rules.notHonoured) {
      if (value !== null && value !== undefined && value !== false)
        throw invalidRequest(`${field}: ${rules.notHonoured[field]}`, field, "unsupported_parameter");
    } else if (field in rules.known) {
      continue;
    } else if (REASONING_FIELDS.has(field)) {
      if (value !== null && value !== undefined) ignored.push(field);
    } else {
      if (strict)
        throw invalidRequest(
          `Unrecognized request argument supplied: ${field} (this server runs with --strict-params)`,
          field,
          "unsupported_parameter",
        );
      ignored.push(field);
    }
  }
  return ignored;
}

/** The body without the ignored fields, for the route's schema. */
export function withoutFields(body: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  if (!fields.length) return body;
  const rest = { ...body };
  for (const f of fields) delete rest[f];
  return rest;
}

/** Says which fields were ignored: on the response, in the log (names only), and to the metric. */
export function reportIgnored(
  c: Context,
  deps: { log: Logger; ignoredFields?: ((api: string, fields: readonly string[]) => void) | undefined },
  api: string,
  fields: readonly string[],
): void {
  if (!fields.length) return;
  // A header value is one line of visible characters: a client's odd field name cannot break it.
  c.header(IGNORED_FIELDS_HEADER, fields.map((f) => f.replace(/[^\x21-\x7e]/g, "?").slice(0, 64)).join(", "));
  deps.log.info({ api, fields: fields.map((f) => f.slice(0, 64)) }, "request fields ignored");
  deps.ignoredFields?.(api, fields);
}

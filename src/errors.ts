// One error taxonomy for every surface. A UserError is one whose message tells the person what
// to fix or what happened (a bad request, a flag, a port in use, a model file that will not
// load): the HTTP API renders it in OpenAI's shape with its status, MCP returns it as an
// isError result, the CLI prints it and exits with its code. Anything else is a fault of
// Psyche's own: logged with its stack, and only summarised to the caller.
import type { z } from "zod";

export type ErrorType = "invalid_request_error" | "authentication_error" | "not_found_error" | "server_error" | "service_unavailable";

export interface UserErrorOptions {
  /** The HTTP status it maps to. Default 400. */
  status?: number;
  /** OpenAI's error type. Default: from the status. */
  type?: ErrorType;
  /** The request field at fault, if any. */
  param?: string | null;
  /** A stable machine-readable code, if any. */
  code?: string | null;
  /** The CLI's exit code. Default 1 (2 is kept for usage and configuration errors). */
  exitCode?: number;
  cause?: unknown;
}

const typeFor = (status: number): ErrorType =>
  status === 401
    ? "authentication_error"
    : status === 404
      ? "not_found_error"
      : status === 503
        ? "service_unavailable"
        : status >= 500
          ? "server_error"
          : "invalid_request_error";

export class UserError extends Error {
  override name = "UserError";
  readonly status: number;
  readonly type: ErrorType;
  readonly param: string | null;
  readonly code: string | null;
  readonly exitCode: number;

  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { cause: opts.cause });
    this.status = opts.status ?? 400;
    this.type = opts.type ?? typeFor(this.status);
    this.param = opts.param ?? null;
    this.code = opts.code ?? null;
    this.exitCode = opts.exitCode ?? 1;
  }

  /** OpenAI's error shape: {"error": {"message", "type", "param", "code"}}. */
  toJSON() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/**
 * A prompt longer than the model's context: refused where the request arrives
 * (conversation/context-fit.ts), and by the engine, before it reads a token.
 */
export class ContextOverflow extends UserError {
  override name = "ContextOverflow";

  constructor(
    readonly promptTokens: number,
    readonly contextSize: number,
  ) {
    super(
      `This model's maximum context length is ${contextSize} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
      { param: "messages", code: "context_length_exceeded" },
    );
  }

  /** Anthropic's wording, which Claude Code reads to compact its history. */
  get anthropicMessage(): string {
    return `prompt is too long: ${this.promptTokens} tokens > ${this.contextSize} maximum`;
  }
}

/** A 400 that names the field at fault. */
export const invalidRequest = (message: string, param?: string, code?: string) =>
  new UserError(message, { param: param ?? null, code: code ?? null });

/** `messages[0].role` from zod's ["messages", 0, "role"]. */
const fieldPath = (path: readonly PropertyKey[]) =>
  path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "");

/**
 * A union none of whose alternatives matched says only "Invalid input": the alternative that
 * got furthest (the longest path: a list of blocks rather than a string, say) tells what is
 * wrong, under the union's own path.
 */
function deepest(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union" || !issue.errors.length) return issue;
  const best = issue.errors.flat().reduce<z.core.$ZodIssue | undefined>((a, b) => (!a || b.path.length > a.path.length ? b : a), undefined);
  if (!best || best.path.length === 0) return issue;
  const inner = deepest(best);
  return { ...inner, path: [...issue.path, ...inner.path] };
}

/** Turns zod issues into one readable 400 that names the first offending field. */
export function fromZodError(error: z.ZodError): UserError {
  const issues = error.issues.map(deepest);
  const message = issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${fieldPath(i.path)}: ${i.message}` : i.message))
    .join("; ");
  const first = issues[0];
  return invalidRequest(`Invalid request: ${message}`, first?.path.length ? fieldPath(first.path) : undefined, "invalid_value");
}

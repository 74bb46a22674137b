// One error type for the API, rendered in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}}.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";

export type ApiErrorType = "invalid_request_error" | "authentication_error" | "not_found_error" | "server_error" | "service_unavailable";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: ContentfulStatusCode,
    readonly type: ApiErrorType,
    message: string,
    readonly opts: { param?: string | null; code?: string | null; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
  }

  toJSON() {
    return { error: { message: this.message, type: this.type, param: this.opts.param ?? null, code: this.opts.code ?? null } };
  }
}

export const invalidRequest = (message: string, param?: string, code?: string) =>
  new ApiError(400, "invalid_request_error", message, { param: param ?? null, code: code ?? null });

/** Turns zod issues into one readable 400 that names the first offending field. */
export function fromZodError(error: z.ZodError): ApiError {
  const issue = error.issues[0];
  const path = issue?.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "") ?? "";
  const message = error.issues
    .slice(0, 3)
    .map((i) => {
      const where = i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "");
      return where ? `${where}: ${i.message}` : i.message;
    })
    .join("; ");
  return invalidRequest(`Invalid request: ${message}`, path || undefined, "invalid_value");
}

export function errorResponse(c: Context, err: ApiError): Response {
  return c.json(err.toJSON(), err.status);
}

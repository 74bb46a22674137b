// One error type for the API, rendered in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}}.
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

/** `messages[0].role` from zod's ["messages", 0, "role"]. */
const fieldPath = (path: readonly PropertyKey[]) =>
  path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "");

/** Turns zod issues into one readable 400 that names the first offending field. */
export function fromZodError(error: z.ZodError): ApiError {
  const message = error.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${fieldPath(i.path)}: ${i.message}` : i.message))
    .join("; ");
  const first = error.issues[0];
  return invalidRequest(`Invalid request: ${message}`, first?.path.length ? fieldPath(first.path) : undefined, "invalid_value");
}

/** OpenAI's answer to a model name this server does not serve. */
export const modelNotFound = (requested: string, served: string) =>
  new ApiError(404, "invalid_request_error", `The model '${requested}' does not exist: this server serves '${served}' (see GET /v1/models)`, {
    param: "model",
    code: "model_not_found",
  });

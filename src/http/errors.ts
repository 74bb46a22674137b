// The API's errors: UserErrors (src/errors.ts) built with a status and OpenAI's error type,
// rendered in OpenAI's shape by the app's error handler (http/app.ts).
import { type ErrorType, UserError, type UserErrorOptions } from "../errors.js";

export class ApiError extends UserError {
  override name = "ApiError";
  constructor(status: number, type: ErrorType, message: string, opts: Omit<UserErrorOptions, "status" | "type"> = {}) {
    super(message, { ...opts, status, type });
  }
}

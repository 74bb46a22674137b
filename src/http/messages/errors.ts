// Anthropic's error shape, {"type": "error", "error": {"type", "message"}}, with the error types
// Anthropic gives each status: the Anthropic SDK and Claude Code read these (Claude Code
// compacts its history on "prompt is too long").
const TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

/** The paths that answer in Anthropic's shape. */
export const isAnthropicPath = (path: string) => path === "/v1/messages" || path.startsWith("/v1/messages/");

export function anthropicError(status: number, message: string) {
  return { type: "error" as const, error: { type: TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"), message } };
}

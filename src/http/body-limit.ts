// The request body's limit (PSYCHE_BODY_LIMIT), read from Content-Length where a request has
// one, as hono's bodyLimit reads it. Hono's asks for the request's body stream first, and on
// @hono/node-server that one property builds the whole WHATWG Request (undici's, its headers
// and its stream): 0.75 ms of the server's thread a chat, profiled with chats arriving at once,
// where a handler that reads the body as text is served from Node's own stream without it
// (docs/benchmarks.md, "A request read without a Request"). A body sent without a length
// (chunked) is counted by hono's middleware, as before.
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit as countedBodyLimit } from "hono/body-limit";

export function bodyLimit(maxSize: number, onError: (c: Context) => never): MiddlewareHandler {
  const counted = countedBodyLimit({ maxSize, onError });
  return async (c, next) => {
    const method = c.req.method;
    if (method === "GET" || method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length === undefined || c.req.header("transfer-encoding") !== undefined) return counted(c, next);
    // Node's parser has read no more than the length says, and refused a malformed one.
    if (Number(length) > maxSize) onError(c);
    return next();
  };
}

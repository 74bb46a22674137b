import type { Context } from "hono";
import { invalidRequest } from "../errors.js";

/** Parses the body as a JSON object, or throws a 400 that says what is wrong with it. */
export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (!text.trim()) throw invalidRequest("The request body is empty: send a JSON object");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw invalidRequest(`The request body is not valid JSON: ${(err as Error).message}`, undefined, "invalid_json");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("The request body must be a JSON object", undefined, "invalid_json");
  }
  return body as Record<string, unknown>;
}

// Threads validate what they are sent. Errors cross to the main thread by structured clone,
// which keeps a plain Error's message (a ZodError's is computed, and would arrive empty).
import { z } from "zod";

export function parseTask<T extends z.ZodType>(schema: T, task: unknown): z.infer<T> {
  const parsed = schema.safeParse(task);
  if (!parsed.success) throw new Error(`malformed task: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

// Postgres keeps no NUL character in text or jsonb: a value holding one fails the statement that
// stores it, as the server's error. Callers look first and refuse it as bad input, naming the field.

const NUL = "\u0000";

/** Whether `value` holds a NUL character in any string or key (not the six characters `\u0000` a text may quote). */
export function holdsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes(NUL);
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === "object") return Object.entries(value).some(([k, v]) => k.includes(NUL) || holdsNul(v));
  return false;
}

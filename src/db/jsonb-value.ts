// A value as a jsonb column gives it back, and a real (float4) column a number: for a row made
// here before its statement runs (db/sql/turns.ts, insertedTurn), which must read as the
// statement's own returned row would.

/**
 * `value` as jsonb stores it: an object's keys ordered shorter first, then byte by byte (a
 * function schema's `type` before its `properties`), arrays and scalars as they are. Integer-like
 * keys are ordered by JavaScript itself, as they are in any object parsed from the column.
 */
export function asJsonb(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  return order(JSON.parse(JSON.stringify(value)) as unknown);
}

function order(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(order);
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value).sort((a, b) => {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length - y.length || Buffer.compare(x, y);
  });
  return Object.fromEntries(keys.map((k) => [k, order((value as Record<string, unknown>)[k])]));
}

/**
 * `n` as a real column reads back: the float4 nearest it, in the fewest digits that name that
 * float4 (Postgres's output for real), so 0.7 stays 0.7 and 0.123456789 becomes 0.12345679.
 */
export function asReal(n: number | null | undefined): number | null {
  if (n === null || n === undefined) return null;
  const f = Math.fround(n);
  if (!Number.isFinite(f) || f === 0) return f;
  for (let digits = 1; digits < 10; digits++) {
    const shortest = Number(f.toPrecision(digits));
    if (Math.fround(shortest) === f) return shortest;
  }
  return f;
}

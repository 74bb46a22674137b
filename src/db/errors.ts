// Postgres error codes we act on, by name (the SQLSTATE codes of Postgres's errcodes appendix).
export const PgErrorCode = {
  undefinedFile: "58P01",
  adminShutdown: "57P01",
  connectionFailure: "08006",
  /** psyche_require (migrations/000025_require.sql): a part of a statement the rest depends on did not happen. */
  requirementFailed: "PS001",
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);
// node-postgres reports a connection that dies under a query with these words and no code.
const CONNECTION_MESSAGES =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Client was closed and is not queryable/i;

/**
 * A connection failure, as opposed to a query that the server rejected: the network's errors,
 * Postgres's connection class (08) and its shutting down (57P01..03), and node-postgres's
 * words for a connection that died under a query.
 */
export function isConnectionError(err: unknown): boolean {
  const code = pgErrorCode(err);
  if (code !== undefined && (CONNECTION_CODES.has(code) || code.startsWith("08") || /^57P0[123]$/.test(code))) return true;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === "string" && CONNECTION_MESSAGES.test(message);
}

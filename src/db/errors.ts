// Postgres error codes we act on, by name (the SQLSTATE codes of Postgres's errcodes appendix).
export const PgErrorCode = {
  undefinedFile: "58P01",
  adminShutdown: "57P01",
  connectionFailure: "08006",
} as const;

export function pgErrorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** A connection failure, as opposed to a query that the server rejected. */
export function isConnectionError(err: unknown): boolean {
  const code = pgErrorCode(err);
  return code === "ECONNREFUSED" || code === "ECONNRESET" || code === "ENOTFOUND" || code === PgErrorCode.adminShutdown || code === PgErrorCode.connectionFailure;
}

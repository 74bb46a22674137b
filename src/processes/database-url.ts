import type { Config } from "../config.js";

/** DATABASE_URL, or the embedded database that `psyche db` serves on --db-port. */
export function databaseUrl(config: Pick<Config, "databaseUrl" | "dbPort">): string {
  return config.databaseUrl ?? `postgresql://postgres@127.0.0.1:${config.dbPort}/postgres`;
}

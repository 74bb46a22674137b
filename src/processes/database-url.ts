import type { Config } from "../config.js";
import { embeddedPassword, embeddedUrl } from "../db/embedded-password.js";

/** DATABASE_URL, or the embedded database that `psyche db` serves on --db-port (its password is in the data directory). */
export function databaseUrl(config: Pick<Config, "databaseUrl" | "dbPort" | "dataDir">): string {
  return config.databaseUrl ?? embeddedUrl("127.0.0.1", config.dbPort, embeddedPassword(config.dataDir));
}

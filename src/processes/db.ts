// `psyche db`: the embedded Postgres alone, for the Procfile's other processes to meet in.
import type { Config } from "../config.js";
import { startEmbeddedDatabase, type EmbeddedDatabase } from "../db/embedded.js";
import type { Logger } from "../log.js";
import type { Running } from "./stack.js";

export async function runDatabase(config: Config, log: Logger): Promise<Running & { database: EmbeddedDatabase }> {
  const database = await startEmbeddedDatabase({ dataDir: config.dataDir, port: config.dbPort });
  // The port, not the address: the address holds the password, and logs carry no secret.
  log.info({ port: database.port }, "embedded database listening");
  return { database, stop: () => database.stop() };
}

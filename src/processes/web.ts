// `psyche web`: the HTTP API and MCP without the model, any number of them (Procfile). It
// finds the database, the workers and the other web processes only through Postgres.
import type { Config } from "../config.js";
import { waitForDatabase } from "../db/wait.js";
import type { Logger } from "../log.js";
import type { RunningServer } from "../http/server.js";
import { loadTokenizer } from "../inference/load-model.js";
import { connect } from "./connect.js";
import { databaseUrl } from "./database-url.js";
import { startMemoryServices } from "./memory-services.js";
import { startWebRole, webServices } from "./roles.js";
import { DATABASE_WAIT_MS, type Running, StopStack, stopStepLimitMs, stopper } from "./stack.js";

export async function runWeb(config: Config, log: Logger): Promise<Running & { server: RunningServer }> {
  const stack = new StopStack(stopStepLimitMs(config));
  const stop = stopper(stack, log);
  try {
    await waitForDatabase(databaseUrl(config), DATABASE_WAIT_MS);
    const db = await connect({ log, stack }, databaseUrl(config), { migrate: false, supervise: false, embeddedInProcess: false });
    const mem = await startMemoryServices({ config, log, stack }, db);
    const shared = { config, log, stack };
    // The model's vocabulary alone, for POST /v1/messages/count_tokens: no weights in a web
    // process, and loaded at the first count, so that nothing at start waits on it.
    let tokenizer: Promise<((text: string) => number) | undefined> | undefined;
    const countTokens = async (text: string) => {
      tokenizer ??= loadTokenizer(config.model, config.dataDir, log).catch((err: unknown) => {
        log.warn({ err }, "the model's tokenizer could not be loaded: count_tokens answers 503");
        return undefined;
      });
      const count = await tokenizer;
      return count ? count(text) : undefined;
    };
    // The up-front context check (conversation/context-fit.ts) counts with this vocabulary
    // against the context the live workers recorded.
    const server = await startWebRole(shared, { ...webServices(shared, db, mem), countTokens });
    return { server, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

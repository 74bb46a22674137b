// The inference process: the only one that loads the chat model. It wires things from src/
// and runs the worker loop until SIGTERM.
import type { Config } from "../src/config.js";
import { createLlamaEngine } from "../src/inference/create-engine.js";
import type { InferenceWorker } from "./inference-worker.js";
import type { Logger } from "../src/log.js";
import { databaseUrl } from "../src/processes/database-url.js";
import { connect, startInferenceRole } from "../src/processes/roles.js";
import { startMemoryServices } from "../src/processes/memory-services.js";
import { DATABASE_WAIT_MS, stopper } from "../src/processes/separate.js";
import { waitForDatabase } from "../src/db/wait.js";
import { StopStack, stopStepLimitMs } from "../src/processes/stack.js";

export async function runInference(config: Config, log: Logger): Promise<{ worker: InferenceWorker; stop(): Promise<string[]> }> {
  const stack = new StopStack(stopStepLimitMs(config));
  const stop = stopper(stack, log);
  try {
    await waitForDatabase(databaseUrl(config), DATABASE_WAIT_MS);
    const db = await connect({ config, log, stack }, databaseUrl(config), { migrate: false, supervise: true, embeddedInProcess: false });
    const engine = await createLlamaEngine(config, log);
    const mem = await startMemoryServices({ config, log, stack }, db);
    const worker = await startInferenceRole({ config, log, stack }, db, engine, mem);
    return { worker, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

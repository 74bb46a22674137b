// `psyche inference`: the only process that loads the chat model. It runs the worker's job
// loop (workers/inference-worker.ts) until SIGTERM; one per GPU.
import type { Config } from "../config.js";
import { createLlamaEngine } from "../inference/create-engine.js";
import type { InferenceWorker } from "../../workers/inference-worker.js";
import type { Logger } from "../log.js";
import { waitForDatabase } from "../db/wait.js";
import { connect } from "./connect.js";
import { databaseUrl } from "./database-url.js";
import { startInferenceRole } from "./roles.js";
import { startMemoryServices } from "./memory-services.js";
import { DATABASE_WAIT_MS, StopStack, stopStepLimitMs, stopper } from "./stack.js";

export async function runInference(config: Config, log: Logger): Promise<{ worker: InferenceWorker; stop(): Promise<string[]> }> {
  const stack = new StopStack(stopStepLimitMs(config));
  const stop = stopper(stack, log);
  try {
    await waitForDatabase(databaseUrl(config), DATABASE_WAIT_MS);
    const db = await connect({ log, stack }, databaseUrl(config), { migrate: false, supervise: true, embeddedInProcess: false });
    const engine = await createLlamaEngine(config, log);
    const mem = await startMemoryServices({ config, log, stack }, db);
    const worker = await startInferenceRole({ config, log, stack }, db, engine, mem);
    return { worker, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

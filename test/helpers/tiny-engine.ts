// The real engine on the tiny model as the engine tests that compare its ways make it (two
// model threads, a 1,024-token context, four slots, no prompt cache), with its context and the
// addon's object beside it: those tests look for the patched addon's calls there.
import type { Test } from "tap";
import type { LlamaContext } from "node-llama-cpp";
import { createLlamaEngine } from "../../src/inference/create-engine.js";
import type { LlamaEngine } from "../../src/inference/llama-engine.js";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import type { Config } from "../../src/config.js";
import { createLogger } from "../../src/log.js";
import { serverDir } from "./testdir.js";

export async function tinyEngine(
  t: Test,
  ways: Partial<Pick<Config, "decodeAhead" | "decodeOnMainThread" | "sampleInOneCall" | "yieldCore">> & {
    cores?: number;
    shortBatchMs?: number;
  } = {},
): Promise<{ engine: LlamaEngine; context: LlamaContext; native: Record<string, unknown> }> {
  const dataDir = serverDir(t);
  const engine = await createLlamaEngine(
    { model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 2, contextSize: 1024, parallel: 4, promptCacheMb: 0, ...ways },
    createLogger("silent"),
  );
  t.teardown(() => engine.dispose());
  const context = (engine as unknown as { context: LlamaContext }).context;
  return { engine, context, native: (context as unknown as { _ctx: Record<string, unknown> })._ctx };
}

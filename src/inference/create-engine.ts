import { basename } from "node:path";
import type { Config } from "../config.js";
import type { Logger } from "../log.js";
import { LlamaEngine } from "./llama-engine.js";
import { isGenerated, loadLlama, loadModelFile, resolveModelPath } from "./load-model.js";
import { chooseParallel } from "./choose-parallel.js";
import { unusedGpuBuild } from "./gpu-builds.js";

/** Resolves `--model`, loads it with the configured threads and context, once. */
export async function createLlamaEngine(
  config: Pick<Config, "model" | "dataDir" | "gpu" | "threads" | "contextSize"> &
    Partial<Pick<Config, "parallel" | "promptCacheMb" | "sampleInOneCall" | "decodeOnMainThread" | "decodeAhead" | "yieldCore">> &
    Partial<Pick<Config, "hfEndpoint" | "downloadTimeoutSeconds">> & {
      batchSize?: number | undefined;
      cores?: number | undefined;
      shortBatchMs?: number | undefined;
    },
  log: Logger,
): Promise<LlamaEngine> {
  // A chat model can be gigabytes: no total limit, but a download that stalls is given up.
  const path = await resolveModelPath(config.model, config.dataDir, {
    endpoint: config.hfEndpoint,
    limit: { kind: "stall", ms: (config.downloadTimeoutSeconds ?? 10) * 1000 },
    log,
  });
  const llama = await loadLlama(config.gpu, log);
  const unused = unusedGpuBuild(config.gpu, llama.gpu);
  if (unused) log.warn(unused);
  const model = await loadModelFile(llama, path);
  const gpu = llama.gpu !== false;
  const sizedFor = config.contextSize ?? model.trainContextSize;
  const slots = await chooseParallel({
    requested: config.parallel,
    gpu,
    freeGpuBytes: gpu ? (await llama.getVramState()).free : 0,
    gpuBytesFor: async (sequences) =>
      (
        await model.fileInsights.estimateContextResourceRequirementsV2({
          contextSize: sizedFor,
          modelGpuLayers: model.gpuLayers,
          sequences,
          ...(config.batchSize ? { batchSize: config.batchSize } : {}),
        })
      ).gpuVram,
  });
  // Config's default (16), for a caller that builds its own settings.
  const ahead = config.decodeAhead ?? 16;
  const engine = await LlamaEngine.create({
    llama,
    model,
    modelName: isGenerated(config.model) ? config.model : basename(path),
    threads: config.threads,
    contextSize: config.contextSize,
    batchSize: config.batchSize,
    parallel: slots.parallel,
    promptCacheBytes: (config.promptCacheMb ?? 0) * 2 ** 20,
    sampleInOneCall: config.sampleInOneCall ?? true,
    decodeOnMainThread: config.decodeOnMainThread ?? false,
    decodeAhead: ahead,
    // Config's default (on), for a caller that builds its own settings.
    yieldCore: config.yieldCore ?? true,
    cores: config.cores,
    shortBatchMs: config.shortBatchMs,
  });
  log.info(
    {
      model: path,
      // Which engine: built here by npm install (scripts/build-engine.mjs) or node-llama-cpp's prebuilt, and its GPU.
      engine: llama.buildType,
      gpu: llama.gpu,
      // A batch's sequences sampled in one native call (--sample-in-one-call): an engine built here.
      samplesInOneCall: engine.oneCallSampling !== undefined,
      // ...and in the decode's own call (the addon and decode loop patched): one hop a step.
      samplesInDecode: engine.samplesInDecode,
      // ...and on the JavaScript thread, no hop at all (--decode-on-main-thread, off).
      decodeOnMainThread: config.decodeOnMainThread ? (engine.decodePlaces ? true : "unavailable") : false,
      // ...and a chat generating alone decodes several steps a call (--decode-ahead): the most, or unavailable.
      decodeAhead: ahead < 2 ? 0 : engine.ahead ? ahead : "unavailable",
      threads: config.threads,
      // A batch decoded while this process takes a turn in leaves its JavaScript thread a core
      // (--yield-core): where the threads are at least the cores, and the engine can set them per batch.
      yieldCore: config.yieldCore === false ? false : engine.batchThreads ? true : "unavailable",
      // libuv's pool, which the engine's calls run on (bin/psyche.cjs sets one thread for servers).
      threadpool: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
      parallel: engine.slots,
      parallelFrom: slots.why,
      promptCacheMb: config.promptCacheMb ?? 0,
      contextSize: engine.contextSize,
      trainedContextSize: model.trainContextSize,
    },
    "model loaded",
  );
  // What Psyche relies on of node-llama-cpp's internals, checked now (docs/developing.md, "Library internals").
  for (const problem of await engine.internalsProblems()) log.warn(problem);
  return engine;
}

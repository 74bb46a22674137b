// The scheduler a test of the engine generates through: one per engine, so its slots' states
// and choices carry from one generation to the next, as in the worker (inference/scheduler.ts).
import type { InferenceEngine } from "../../src/inference/engine.js";
import { type ModelScheduler, type ScheduledJob, standaloneScheduler } from "../../src/inference/scheduler.js";

const schedulers = new WeakMap<InferenceEngine, ModelScheduler<ScheduledJob>>();

export function modelOf(engine: InferenceEngine): ModelScheduler<ScheduledJob> {
  let scheduler = schedulers.get(engine);
  if (!scheduler) {
    scheduler = standaloneScheduler(engine);
    schedulers.set(engine, scheduler);
  }
  return scheduler;
}

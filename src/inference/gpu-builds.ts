// The GPU engines npm install built here (scripts/build-engine.mjs), to say so when `--gpu auto`
// still runs the model on the CPU: node-llama-cpp takes a GPU only where it finds the driver's and
// CUDA's libraries (on LD_LIBRARY_PATH or in a few fixed folders), and a machine whose toolkit the
// build found can keep them elsewhere. Naming the backend (`--gpu cuda`) skips that search.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../paths.js";

const localBuildsDir = () => join(packageRoot(), "node_modules", "node-llama-cpp", "llama", "localBuilds");

/** Finished GPU builds in `dir`, by backend: a build cut short has no addon and is left out. */
export function localGpuBuilds(dir = localBuildsDir()): { build: string; backend: "cuda" | "vulkan" }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((build) => {
    const backend = /-(cuda|vulkan)\b/.exec(build)?.[1] as "cuda" | "vulkan" | undefined;
    return backend && existsSync(join(dir, build, "Release", "llama-addon.node")) ? [{ build, backend }] : [];
  });
}

/** What to say when `auto` chose the CPU beside a GPU build; undefined when there is nothing to say. */
export function unusedGpuBuild(gpu: string, chosen: string | false, dir?: string): string | undefined {
  if (gpu !== "auto" || chosen !== false) return undefined;
  const [first] = localGpuBuilds(dir);
  if (!first) return undefined;
  return (
    `--gpu auto runs the model on the CPU: node-llama-cpp found no ${first.backend} libraries, ` +
    `though npm install built a ${first.backend} engine here (${first.build}). --gpu ${first.backend} uses it`
  );
}

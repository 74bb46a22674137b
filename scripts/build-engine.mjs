// Run by `npm install` (postinstall), and by `npm run build:engine`. Compiles node-llama-cpp
// from the llama.cpp it bundles (node_modules/node-llama-cpp/llama/gitRelease.bundle, offline)
// when cmake and a C++ compiler are here. Why: the prebuilt CPU binary is built without OpenMP,
// and on a CPU its second thread buys almost nothing; built here, with OpenMP and for this
// machine's CPU, the same model decodes about 1.5x faster (docs/benchmarks.md). A CUDA or
// Vulkan toolkit on the machine gets the GPU build. node-llama-cpp then loads the local build
// by itself (src/inference/load-model.ts); without one it keeps the prebuilt binary.
//
//   PSYCHE_ENGINE_BUILD=prebuilt npm install    keeps the prebuilt binary (no compile)
//   npm run build:engine                        builds now (again: PSYCHE_ENGINE_BUILD=force)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "node_modules", "node-llama-cpp");
const say = (line) => console.log(`build-engine: ${line}`);
const has = (cmd, args = ["--version"]) => spawnSync(cmd, args, { stdio: "ignore" }).status === 0;
const choice = process.env.PSYCHE_ENGINE_BUILD ?? "auto";

/** Finished local builds (a build that was cut short leaves a folder without its addon). */
function localBuilds() {
  const dir = join(pkg, "llama", "localBuilds");
  return existsSync(dir) ? readdirSync(dir).filter((b) => existsSync(join(dir, b, "Release", "llama-addon.node"))) : [];
}

/** A GPU this machine has and can build for: a toolkit alone (a CI image's CUDA, no card) is not one. */
function gpuToolkit() {
  const nvidia = spawnSync("nvidia-smi", ["-L"], { encoding: "utf8" });
  if (nvidia.status === 0 && /GPU \d/.test(nvidia.stdout) && (has("nvcc") || existsSync("/usr/local/cuda/bin/nvcc"))) return "cuda";
  if (has("vulkaninfo", ["--summary"]) && has("glslc")) return "vulkan";
  return false;
}

function main() {
  if (!existsSync(pkg)) return say("node-llama-cpp is not installed; nothing to build");
  if (choice === "prebuilt") return say("PSYCHE_ENGINE_BUILD=prebuilt: keeping node-llama-cpp's prebuilt binary");
  if (!["auto", "force"].includes(choice)) return say(`PSYCHE_ENGINE_BUILD=${choice} is not one of auto, force, prebuilt; nothing built`);
  if (choice === "auto" && localBuilds().length) return say(`a local build is here already (${localBuilds().join(", ")}); kept`);
  const missing = [!has("cmake") && "cmake", !has("c++") && "a C++ compiler (g++)"].filter(Boolean);
  if (missing.length) {
    say(`keeping the prebuilt binary: ${missing.join(" and ")} missing. With them (apt-get install cmake g++), npm run build:engine`);
    say("compiles the engine for this machine, about 1.5x faster decoding on a CPU, and a GPU build where its toolkit is");
    return;
  }
  const gpu = gpuToolkit();
  // The backend found above is named to node-llama-cpp: its own "auto" looks for the driver's
  // libraries in a few fixed folders and, not finding them, quietly builds for the CPU. A GPU
  // build that fails falls back to the CPU build, which is still faster than the prebuilt.
  const targets = gpu ? [gpu, "false"] : ["false"];
  const cli = join(pkg, "dist", "cli", "cli.js");
  for (const [i, target] of targets.entries()) {
    const started = Date.now();
    say(
      `compiling llama.cpp for this machine (${target === "false" ? "CPU, with OpenMP" : `${target} GPU`}), offline from node-llama-cpp's bundle: ` +
        `about ${target === "false" ? "10 minutes on 2 cores" : "5 minutes on 16 cores"}, once. PSYCHE_ENGINE_BUILD=prebuilt npm install skips it`,
    );
    const run = spawnSync(process.execPath, [cli, "source", "download", "--gpu", target, "--noUsageExample"], {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
    });
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    if (run.status === 0) return say(`built in ${minutes} min: Psyche uses it from now on (${localBuilds().join(", ")})`);
    say(`the ${target === "false" ? "CPU" : target} build failed after ${minutes} min (exit ${run.status})`);
    if (i < targets.length - 1) say("building for the CPU instead");
  }
  say("keeping the prebuilt binary, which works as before");
}

main();

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
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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

/** Left out of every build: see withoutAmx. */
const noAmx = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16";

// What a local build was made from: the patch its addon was compiled with and the flags above.
// A plain npm install (auto) builds again where they changed, so that an update that changes the
// addon (a new native call) or the flags reaches a machine that built the engine before.
const recipeFile = join(pkg, "llama", "localBuilds", ".psyche-recipe");
function recipe() {
  const patches = join(root, "patches");
  const hash = createHash("sha256").update(noAmx);
  for (const name of existsSync(patches) ? readdirSync(patches).sort() : []) hash.update(readFileSync(join(patches, name)));
  return hash.digest("hex").slice(0, 16);
}
const builtRecipe = () => (existsSync(recipeFile) ? readFileSync(recipeFile, "utf8").trim() : undefined);

/** A GPU this machine has and can build for: a toolkit alone (a CI image's CUDA, no card) is not one. */
function gpuToolkit() {
  const nvidia = spawnSync("nvidia-smi", ["-L"], { encoding: "utf8" });
  if (nvidia.status === 0 && /GPU \d/.test(nvidia.stdout) && (has("nvcc") || existsSync("/usr/local/cuda/bin/nvcc"))) return "cuda";
  if (has("vulkaninfo", ["--summary"]) && has("glslc")) return "vulkan";
  return false;
}

/**
 * The build's environment, compiled without Intel's AMX tile instructions where the compiler
 * knows them. Why: built for this machine (-march=native), llama.cpp's CPU backend uses AMX for
 * quantized matrices where the CPU lists it, and on a machine whose CPU lists AMX that its
 * kernel or hypervisor does not let run (this project's Xeon virtual machine, 2026-12-06), the
 * first tile instruction is an illegal instruction: every Q8_0 model died of SIGILL in
 * `tinygemm_kernel_amx`, and llama-server built with llama.cpp's defaults died the same way.
 * AVX-512 still does that work.
 */
function withoutAmx(env) {
  const flags = noAmx;
  const [cxx, ...cxxArgs] = (env.CXX ?? "c++").split(" ");
  const known = spawnSync(cxx, [...cxxArgs, ...flags.split(" "), "-x", "c++", "-E", "-"], {
    input: "",
    stdio: ["pipe", "ignore", "ignore"],
  });
  if (process.arch !== "x64" || known.status !== 0) return env;
  // As part of the compilers' names: cmake-js sets CMAKE_CXX_FLAGS itself (CXXFLAGS is lost),
  // and node-llama-cpp names a build with cmake options for those options alone, which Psyche's
  // loading (src/inference/load-model.ts) does not ask for. GCC and Clang keep an explicit -mno-*
  // whatever -march=native says.
  return { ...env, CC: `${env.CC ?? "cc"} ${flags}`, CXX: `${env.CXX ?? "c++"} ${flags}` };
}

function main() {
  if (!existsSync(pkg)) return say("node-llama-cpp is not installed; nothing to build");
  if (choice === "prebuilt") return say("PSYCHE_ENGINE_BUILD=prebuilt: keeping node-llama-cpp's prebuilt binary");
  if (!["auto", "force"].includes(choice)) return say(`PSYCHE_ENGINE_BUILD=${choice} is not one of auto, force, prebuilt; nothing built`);
  if (choice === "auto" && localBuilds().length) {
    if (builtRecipe() === recipe()) return say(`a local build is here already (${localBuilds().join(", ")}); kept`);
    say(`the local build (${localBuilds().join(", ")}) was made before the addon's patch or its flags changed: building again`);
  }
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
  const env = withoutAmx(process.env);
  for (const [i, target] of targets.entries()) {
    const started = Date.now();
    say(
      `compiling llama.cpp for this machine (${target === "false" ? "CPU, with OpenMP" : `${target} GPU`}), offline from node-llama-cpp's bundle: ` +
        `about ${target === "false" ? "10 minutes on 2 cores" : "5 minutes on 16 cores"}, once. PSYCHE_ENGINE_BUILD=prebuilt npm install skips it`,
    );
    const run = spawnSync(process.execPath, [cli, "source", "download", "--gpu", target, "--noUsageExample"], {
      cwd: root,
      env,
      stdio: ["ignore", "ignore", "inherit"],
    });
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    if (run.status === 0) {
      writeFileSync(recipeFile, `${recipe()}\n`);
      return say(`built in ${minutes} min: Psyche uses it from now on (${localBuilds().join(", ")})`);
    }
    say(`the ${target === "false" ? "CPU" : target} build failed after ${minutes} min (exit ${run.status})`);
    if (i < targets.length - 1) say("building for the CPU instead");
  }
  say("keeping the prebuilt binary, which works as before");
}

main();

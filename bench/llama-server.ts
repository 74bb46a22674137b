// The yardstick: llama-server built from the very llama.cpp node-llama-cpp bundles
// (node_modules/node-llama-cpp/llama/gitRelease.bundle), once, into a cache outside the
// repository, with cmake's defaults (as a user who builds llama.cpp gets it) but for AMX, left
// out as Psyche's engine leaves it out (scripts/build-engine.mjs), for the CPU or, with
// BENCH_GPU (bench/run.ts), for that GPU. Skipped, with the reason, where git, cmake or a C++
// compiler is missing. PSYCHE_BENCH_LLAMA_SERVER names a llama-server built elsewhere instead.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { availableParallelism, homedir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/paths.js";

export type LlamaServerBuild = { path: string; commit: string; builtSeconds: number | null; given?: true } | { skipped: string };

const has = (cmd: string, args = ["--version"]) => spawnSync(cmd, args, { stdio: "ignore" }).status === 0;

/**
 * Intel's AMX tile instructions, left out where the compiler knows them: on this project's Xeon
 * (2026-12-06) a build for the machine died of an illegal instruction at its first quantized
 * matrix product, llama-server's as Psyche's engine's.
 */
const NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16";
const withoutAmx = () =>
  process.arch === "x64" &&
  spawnSync("c++", [...NO_AMX.split(" "), "-x", "c++", "-E", "-"], { input: "", stdio: ["pipe", "ignore", "ignore"] }).status === 0;

/** The GPU backends the bench builds llama-server for, as llama.cpp's cmake option names them. */
const GPU_OPTION = { cuda: "-DGGML_CUDA=ON", vulkan: "-DGGML_VULKAN=ON" } as const;
export type BenchGpu = keyof typeof GPU_OPTION;

/** A llama-server built elsewhere, used as it is; its commit as its `--version` says. */
function givenLlamaServer(path: string): LlamaServerBuild {
  if (!existsSync(path)) return { skipped: `PSYCHE_BENCH_LLAMA_SERVER names ${path}, which is not there` };
  const version = spawnSync(path, ["--version"], { encoding: "utf8" });
  const commit = /commit ([0-9a-f]{7,})/.exec(`${version.stdout}${version.stderr}`)?.[1];
  return commit ? { path, commit, builtSeconds: null, given: true } : { skipped: `${path} --version names no commit: is it llama-server?` };
}

export function ensureLlamaServer(say: (line: string) => void, gpu: BenchGpu | false = false): LlamaServerBuild {
  const given = process.env.PSYCHE_BENCH_LLAMA_SERVER;
  if (given) return givenLlamaServer(given);
  const bundle = join(packageRoot(), "node_modules", "node-llama-cpp", "llama", "gitRelease.bundle");
  if (!existsSync(bundle)) return { skipped: `no ${bundle}` };
  if (!has("git")) return { skipped: "git is missing" };
  const commit = execFileSync("git", ["bundle", "list-heads", bundle], { encoding: "utf8" }).split(/\s/)[0]!.slice(0, 12);
  const noAmx = withoutAmx();
  const dir = join(
    process.env.PSYCHE_BENCH_CACHE ?? join(homedir(), ".cache", "psyche"),
    `llama-server-${commit}${gpu ? `-${gpu}` : ""}${noAmx ? "-noamx" : ""}`,
  );
  const path = join(dir, "build", "bin", "llama-server");
  if (existsSync(path)) return { path, commit, builtSeconds: null };
  if (!has("cmake")) return { skipped: "cmake is missing (apt-get install cmake)" };
  if (!has("c++")) return { skipped: "no C++ compiler (apt-get install g++)" };
  const started = Date.now();
  say(
    `building llama-server${gpu ? ` for ${gpu}` : ""} from node-llama-cpp's bundled llama.cpp (${commit}) into ${dir}; ` +
      `about ${gpu ? "5 minutes on 16 cores" : "10 minutes on 2 cores"}`,
  );
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const src = join(dir, "src");
  execFileSync("git", ["-c", "advice.detachedHead=false", "clone", "-q", bundle, src], { stdio: "inherit" });
  execFileSync(
    "cmake",
    [
      "-S",
      src,
      "-B",
      join(dir, "build"),
      "-DCMAKE_BUILD_TYPE=Release",
      "-DLLAMA_CURL=OFF",
      "-DLLAMA_BUILD_TESTS=OFF",
      "-DLLAMA_BUILD_EXAMPLES=OFF",
      ...(gpu ? [GPU_OPTION[gpu]] : []),
      ...(noAmx ? [`-DCMAKE_C_FLAGS=${NO_AMX}`, `-DCMAKE_CXX_FLAGS=${NO_AMX}`] : []),
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  execFileSync("cmake", ["--build", join(dir, "build"), "--target", "llama-server", "-j", String(availableParallelism())], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  return { path, commit, builtSeconds: (Date.now() - started) / 1000 };
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a server process and waits until `ready` matches its output; its URL from `url(match)`. */
export async function startServer(
  cmd: string,
  args: string[],
  ready: RegExp,
  url: (m: RegExpMatchArray) => string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningServer> {
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} did not start in 180 s:\n${out.slice(-2000)}`)), 180_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code}) before it was ready:\n${out.slice(-2000)}`));
    });
  });
  // Keep draining its output, or a chatty server blocks on a full pipe.
  child.stdout!.resume();
  child.stderr!.resume();
  return {
    url: url(match),
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

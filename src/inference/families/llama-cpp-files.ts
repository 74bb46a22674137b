// Files from the llama.cpp source node-llama-cpp bundles: the families' vocabulary GGUFs
// (models/ggml-vocab-*.gguf) and chat templates (models/templates/*.jinja). They are in
// node_modules/node-llama-cpp/llama/llama.cpp once the engine was compiled here
// (scripts/build-engine.mjs); without that build, they are read out of the git bundle beside it
// (gitRelease.bundle) into a folder under `cacheDir`, once. No network either way.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageRoot } from "../../paths.js";

const llamaFolder = () => join(packageRoot(), "node_modules", "node-llama-cpp", "llama");

/** The path of `file` (relative to llama.cpp's root), reading it out of the bundle into `cacheDir` where the source is not unpacked. */
export function llamaCppFile(file: string, cacheDir: string): string {
  const unpacked = join(llamaFolder(), "llama.cpp", file);
  if (existsSync(unpacked)) return unpacked;
  const bundle = join(llamaFolder(), "gitRelease.bundle");
  if (!existsSync(bundle)) throw new Error(`${file} is not here: node-llama-cpp's llama.cpp source (${bundle}) is missing`);
  const repo = join(cacheDir, "llama.cpp-bundle");
  const out = join(cacheDir, "llama.cpp-files", file);
  if (existsSync(out)) return out;
  const git = (...args: string[]) => execFileSync("git", ["--git-dir", repo, ...args], { maxBuffer: 256 * 1024 * 1024 });
  if (!existsSync(join(repo, "HEAD"))) {
    mkdirSync(repo, { recursive: true });
    git("init", "--quiet", "--bare");
  }
  try {
    git("rev-parse", "--verify", "--quiet", "refs/heads/release");
  } catch {
    git("fetch", "--quiet", bundle, "HEAD:refs/heads/release");
  }
  const bytes = git("show", `release:${file}`);
  mkdirSync(dirname(out), { recursive: true });
  // Written whole or not at all: a cut-short copy is never taken for the file.
  writeFileSync(`${out}.tmp`, bytes);
  renameSync(`${out}.tmp`, out);
  return out;
}

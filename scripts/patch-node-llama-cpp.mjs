// Run by `npm install` (postinstall): applies patches/<package>+<version>.patch, unified diffs
// against the files of the installed package, to that version alone. Idempotent: a hunk whose
// result is there already is left as it is. A package of another version, or a file whose lines
// are not the ones a hunk expects, is left alone with a warning that says what is lost; Psyche
// checks at start-up what it relies on (src/inference/llama-internals.ts) and says so again.
// What each patch does and what would retire it: docs/developing.md, "Library internals".
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const say = (text) => console.log(`patch-node-llama-cpp: ${text}`);

/** The hunks of a unified diff, by the file they change: each as the lines it expects and the lines it leaves. */
export function parsePatch(text) {
  const files = new Map();
  let hunks;
  let hunk;
  for (const line of text.split("\n")) {
    if (line.startsWith("+++ ")) {
      hunks = [];
      files.set(line.slice(4).replace(/^b\//, "").trim(), hunks);
    } else if (line.startsWith("@@")) {
      hunk = { before: [], after: [] };
      hunks.push(hunk);
    } else if (hunk && !line.startsWith("--- ")) {
      const [mark, rest] = [line[0], line.slice(1)];
      if (mark === " " || mark === "-") hunk.before.push(rest);
      if (mark === " " || mark === "+") hunk.after.push(rest);
    }
  }
  return files;
}

/** `source` with the hunks applied: undefined when one expects lines it does not hold. */
export function applyHunks(source, hunks) {
  let out = source;
  for (const { before, after } of hunks) {
    const [was, is] = [before.join("\n"), after.join("\n")];
    if (out.includes(is)) continue;
    if (!out.includes(was)) return undefined;
    out = out.replace(was, is);
  }
  return out;
}

/** Applies every patch in patches/ to the installed package it names. */
function main() {
  const patches = join(root, "patches");
  for (const name of existsSync(patches) ? readdirSync(patches) : []) {
    const m = /^(.+)\+(\d+\.\d+\.\d+)\.patch$/.exec(name);
    if (!m) continue;
    const [, pkg, version] = m;
    const pkgDir = join(root, "node_modules", pkg);
    if (!existsSync(join(pkgDir, "package.json"))) continue;
    const installed = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")).version;
    if (installed !== version) {
      console.warn(`patch-node-llama-cpp: ${name} is for ${pkg} ${version}, and ${installed} is installed: left unpatched`);
      continue;
    }
    for (const [file, hunks] of parsePatch(readFileSync(join(patches, name), "utf8"))) {
      const path = join(pkgDir, file);
      const source = readFileSync(path, "utf8");
      const patched = applyHunks(source, hunks);
      if (patched === undefined) console.warn(`patch-node-llama-cpp: ${pkg}/${file} is not the file ${name} knows: left unpatched`);
      else if (patched !== source) {
        writeFileSync(path, patched);
        say(`${pkg}/${file} patched (${name})`);
      }
    }
  }
}

// Imported (test/inference/library-patch.test.ts), it applies nothing.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();

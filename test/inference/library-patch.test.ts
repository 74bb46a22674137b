// npm install's patch of node-llama-cpp (scripts/patch-node-llama-cpp.mjs): every hunk of
// patches/node-llama-cpp+3.22.1.patch is in the installed package, the addon's source included
// (compiled only where npm install builds the engine), and applying it again changes nothing.
import t from "tap";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { packageRoot } from "../../src/paths.js";

type Hunk = { before: string[]; after: string[] };
const root = packageRoot();
// The script itself, from the package's root (this file runs compiled, from dist/).
const { applyHunks, parsePatch } = (await import(pathToFileURL(join(root, "scripts", "patch-node-llama-cpp.mjs")).href)) as {
  applyHunks(source: string, hunks: Hunk[]): string | undefined;
  parsePatch(text: string): Map<string, Hunk[]>;
};
const patch = readFileSync(join(root, "patches", "node-llama-cpp+3.22.1.patch"), "utf8");
const files = parsePatch(patch);

t.test("the patch names the decode loop and the addon's sampling", async (t) => {
  t.same([...files.keys()].sort(), [
    "dist/evaluator/LlamaContext/LlamaContext.js",
    "llama/addon/AddonContext.cpp",
    "llama/addon/AddonContext.h",
  ]);
});

for (const [file, hunks] of files)
  t.test(`${file}: every hunk is installed, and a second run leaves it as it is`, async (t) => {
    const source = readFileSync(join(root, "node_modules", "node-llama-cpp", file), "utf8");
    for (const { after } of hunks)
      t.ok(source.includes(after.join("\n")), `installed: ${after.find((l) => l.includes("psyche"))?.trim() ?? after[0]}`);
    t.equal(applyHunks(source, hunks), source);
    // The file as node-llama-cpp ships it: each hunk finds the lines it expects.
    const shipped = hunks.reduceRight((text: string, { before, after }) => text.replace(after.join("\n"), before.join("\n")), source);
    t.equal(applyHunks(shipped, hunks), source, "from the shipped file, the patch gives the installed one");
  });

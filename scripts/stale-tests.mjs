// Removes the build's copies of tests whose sources are gone (.taprc runs the tests from dist/):
// tsc writes what it compiles and never removes what it no longer does, so a test renamed or
// deleted would otherwise still run from its old copy.
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(fileURLToPath(import.meta.url), "..", "..");
const compiled = join(root, "dist", "test");

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

if (existsSync(compiled)) {
  for (const file of walk(compiled)) {
    const source = join(root, "test", relative(compiled, file)).replace(/\.js(\.map)?$|\.d\.ts$/, ".ts");
    if (!existsSync(source)) rmSync(file);
  }
}

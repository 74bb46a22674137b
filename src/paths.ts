import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package root (where package.json and migrations/ are), from src/ or dist/src/ alike. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "migrations"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("cannot find Psyche's package root (package.json beside migrations/)");
    dir = up;
  }
}

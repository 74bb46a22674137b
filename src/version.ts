// Psyche's version, from package.json (the one place it is written).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "./paths.js";

export const PSYCHE_VERSION: string = (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string })
  .version;

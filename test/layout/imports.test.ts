// The folders depend one way (README: "Developing"): entry points and job loops on top, then
// the surfaces (http, mcp), the domain, the engine and the tool protocol, then jobs and db at
// the bottom. An import that runs back up fails here, and so does a comment that names a file
// this repository does not have.
import t from "tap";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The foundation, open to every part: configuration, logging, the error taxonomy, the shape of
 * a conversation id (the API, MCP and job payloads all check it), and the tool
 * protocol (src/tools/: types and checks that the requests, the stored turn and the engine all
 * speak). It imports nothing but itself.
 */
const BASE = ["config", "log", "paths", "version", "errors", "conversation-id", "types", "tools"];
/** What each part of src/ may import besides itself and BASE. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  http: ["web-services", "agents", "conversation", "dreams", "memory", "mood", "inference", "jobs", "db"],
  mcp: ["web-services", "agents", "conversation", "dreams", "memory", "mood", "inference", "jobs", "db"],
  "web-services": ["agents", "dreams", "memory", "mood", "jobs", "db"],
  agents: ["memory", "mood", "jobs", "db"],
  // A client of the public API (README: "Hermes"): it imports none of the server.
  hermes: [],
  conversation: ["memory", "mood", "inference", "jobs", "db"],
  dreams: ["memory", "mood", "inference", "jobs", "db"],
  memory: ["mood", "inference", "jobs", "db"],
  mood: ["jobs", "db"],
  inference: [],
  jobs: ["db"],
  db: [],
};
/** Entry points and their wiring: they may import anything. */
const TOP = ["cli", "cli-args", "processes", "workers"];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** The part a file belongs to: its folder under src/, a root file's name, or "workers". */
function partOf(top: string, file: string): string {
  const rel = relative(top, file).split("/");
  if (rel[0] === "workers") return "workers";
  const [first] = rel.slice(1);
  return first!.replace(/\.(ts|js)$/, "");
}

/** Every relative import under `top` that the layers forbid. */
function backwardImports(top: string): string[] {
  const found: string[] = [];
  const all = [...files(join(top, "src")), ...(existsSync(join(top, "workers")) ? files(join(top, "workers")) : [])];
  for (const file of all) {
    const from = partOf(top, file);
    if (TOP.includes(from)) continue;
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
      const to = partOf(top, resolve(dirname(file), m[1]!));
      if (to === from) continue;
      const allowed = BASE.includes(from) ? BASE.includes(to) : BASE.includes(to) || (MAY_IMPORT[from] ?? []).includes(to);
      if (!allowed) found.push(`${relative(top, file)} imports ${m[1]} (${from} -> ${to})`);
    }
  }
  return found;
}

const sources = [...files(join(root, "src")), ...files(join(root, "workers"))];

t.test("imports run one way", async (t) => {
  t.same(backwardImports(root), [], "no import runs back up the layers");
  t.ok(sources.length > 50, "and the check saw the tree");
});

t.test("the check fails on an import that runs back up", async (t) => {
  const dir = t.testdir({
    src: {
      inference: { "engine.ts": 'import { runTurn } from "../conversation/run-turn.js";\n' },
      conversation: { "run-turn.ts": 'import type { InferenceEngine } from "../inference/engine.js";\n' },
      memory: { "recall.ts": 'import { runDream } from "../dreams/dream.js";\n' },
      dreams: { "dream.ts": 'import { recall } from "../memory/recall.js";\n' },
      http: { "app.ts": 'import { mcpRoutes } from "../mcp/http-route.js";\n' },
      mcp: { "http-route.ts": "export {};\n" },
      db: { "pool.ts": 'import { Memory } from "../memory/memory.js";\n' },
    },
  });
  t.same(backwardImports(dir).sort(), [
    "src/db/pool.ts imports ../memory/memory.js (db -> memory)",
    "src/http/app.ts imports ../mcp/http-route.js (http -> mcp)",
    "src/inference/engine.ts imports ../conversation/run-turn.js (inference -> conversation)",
    "src/memory/recall.ts imports ../dreams/dream.js (memory -> dreams)",
  ]);
});

t.test("comments name files that exist", async (t) => {
  const missing: string[] = [];
  for (const file of sources) {
    const lines = readFileSync(file, "utf8").split("\n");
    for (const [i, line] of lines.entries()) {
      const comment = line.match(/^\s*(?:\/\/|\/?\*+)\s?(.*)$/)?.[1];
      if (!comment) continue;
      for (const m of comment.matchAll(/(?<![\w./-])((?:[\w-]+\/)+[\w.-]+\.(?:ts|sql))\b/g)) {
        const named = m[1]!;
        const candidates = [join(root, named), join(root, "src", named), join(dirname(file), named)];
        if (!candidates.some((c) => existsSync(c))) missing.push(`${relative(root, file)}:${i + 1} names ${named}`);
      }
    }
  }
  t.same(missing, [], "every path a comment names is in this repository");
});

t.test("comments say the behaviour instead of citing documents outside the repository", async (t) => {
  // A clone of the repository has no seeds and no ../shared: a comment that sends the reader
  // there explains nothing.
  const outside = /\bseeds?\s+0\d\d\b|\.\.\/shared\b|\bshared\/(?:seeds|ARCHITECTURE|STYLE|notes)\b/i;
  const found: string[] = [];
  for (const file of sources) {
    for (const [i, line] of readFileSync(file, "utf8").split("\n").entries()) {
      const comment = line.match(/^\s*(?:\/\/|\/?\*+)\s?(.*)$/)?.[1] ?? line.match(/\/\/\s?(.*)$/)?.[1];
      if (comment && outside.test(comment)) found.push(`${relative(root, file)}:${i + 1}: ${comment.trim().slice(0, 80)}`);
    }
  }
  t.same(found, [], "no comment cites a seed or ../shared");
});

// The folders depend one way (docs/architecture.md): the command line, then the process entry
// points, the job loops, the surfaces (http, mcp), the domain, the engine and the tool
// protocol, then jobs and db at the bottom. No folder is exempt. An import that runs back up
// fails here, and so does a cycle between files (type-only imports included), and a comment
// that names a file this repository does not have.
import { packageRoot } from "../../src/paths.js";
import t from "tap";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = packageRoot();

/**
 * The foundation, open to every part: configuration, logging, the error taxonomy, the shape of
 * a conversation id (the API, MCP and job payloads all check it) and of a scope (every surface
 * reads one, and the store keeps memories and conversations in it), and the tool
 * protocol (src/tools/: types and checks that the requests, the stored turn and the engine all
 * speak), and where a thread's compiled module is (the memory threads', the embedded database's).
 * It imports nothing but itself.
 */
const BASE = ["config", "log", "paths", "version", "errors", "conversation-id", "scope", "api-keys", "types", "tools", "thread-file"];
const DOMAIN = ["agents", "conversation", "dreams", "memory", "mood", "inference", "jobs", "db"];
/** What each part imports besides itself and BASE. Nothing imports `cli`, the top. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  cli: ["cli-args", "processes", ...DOMAIN],
  "cli-args": [],
  // Every process's entry (serve, web, inference, db, migrate, mcp, hook, chat) and its wiring.
  processes: ["workers", "http", "mcp", "web-services", "hermes", ...DOMAIN],
  // The job loops and thread files: they run the domain, and know nothing of who started them.
  workers: ["conversation", "dreams", "memory", "mood", "inference", "jobs", "db"],
  http: ["web-services", ...DOMAIN],
  mcp: ["web-services", ...DOMAIN],
  // The model's description (Ollama's /api/show) is the engine's type: inference imports nothing back.
  "web-services": ["agents", "dreams", "memory", "mood", "inference", "jobs", "db"],
  agents: ["memory", "mood", "jobs", "db"],
  // A client of the public API (docs/hermes.md): it imports none of the server.
  hermes: [],
  conversation: ["memory", "mood", "inference", "jobs", "db"],
  dreams: ["memory", "mood", "inference", "jobs", "db"],
  memory: ["mood", "inference", "jobs", "db"],
  mood: ["jobs", "db"],
  inference: [],
  jobs: ["db"],
  db: [],
};

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

function sourcesOf(top: string): string[] {
  return [...files(join(top, "src")), ...(existsSync(join(top, "workers")) ? files(join(top, "workers")) : [])];
}

/** The files each file imports, by relative path (type-only imports too). */
function importGraph(top: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourcesOf(top)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)].map((m) =>
      resolve(dirname(file), m[1]!).replace(/\.js$/, ".ts"),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Every relative import under `top` that the layers forbid. */
function backwardImports(top: string): string[] {
  const found: string[] = [];
  for (const [file, targets] of importGraph(top)) {
    const from = partOf(top, file);
    for (const target of targets) {
      const to = partOf(top, target);
      if (to === from) continue;
      const allowed = BASE.includes(from) ? BASE.includes(to) : BASE.includes(to) || (MAY_IMPORT[from] ?? []).includes(to);
      if (!allowed)
        found.push(`${relative(top, file)} imports ${relative(dirname(file), target).replace(/\.ts$/, ".js")} (${from} -> ${to})`);
    }
  }
  return found;
}

/** Files that reach themselves through imports: each cycle's files, sorted (Tarjan's components). */
function importCycles(top: string): string[][] {
  const graph = importGraph(top);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(relative(top, w));
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

const sources = sourcesOf(root);

t.test("imports run one way, and no files import each other", async (t) => {
  t.same(backwardImports(root), [], "no import runs back up the layers");
  t.same(importCycles(root), [], "no cycle between files, type-only imports included");
  t.ok(sources.length > 50, "and the check saw the tree");
});

t.test("the check fails on a cycle, a type-only one too", async (t) => {
  const dir = t.testdir({
    src: {
      processes: {
        "roles.ts": 'import type { MemoryServices } from "./memory-services.js";\n',
        "memory-services.ts": 'import type { Shared } from "./roles.js";\n',
        "serve.ts": 'import { webServices } from "./roles.js";\n',
      },
      memory: { "a.ts": 'import { b } from "./b.js";\n', "b.ts": 'import { c } from "./c.js";\n', "c.ts": 'import { a } from "./a.js";\n' },
    },
  });
  t.same(importCycles(dir).sort(), [
    ["src/memory/a.ts", "src/memory/b.ts", "src/memory/c.ts"],
    ["src/processes/memory-services.ts", "src/processes/roles.ts"],
  ]);
});

t.test("the check fails on an import that runs back up", async (t) => {
  const dir = t.testdir({
    src: {
      inference: { "engine.ts": 'import { runTurn } from "../conversation/run-turn.js";\n' },
      conversation: { "run-turn.ts": 'import type { InferenceEngine } from "../inference/engine.js";\n' },
      memory: { "recall.ts": 'import { runDream } from "../dreams/dream.js";\n' },
      dreams: { "dream.ts": 'import { recall } from "../memory/recall.js";\n' },
      http: { "app.ts": 'import { mcpRoutes } from "../mcp/http-route.js";\n' },
      processes: { "serve.ts": 'import { main } from "../cli.js";\n' },
      "cli.ts": 'import { serve } from "./processes/serve.js";\n',
      mcp: { "http-route.ts": "export {};\n" },
      db: { "pool.ts": 'import { Memory } from "../memory/memory.js";\n' },
    },
  });
  t.same(backwardImports(dir).sort(), [
    "src/db/pool.ts imports ../memory/memory.js (db -> memory)",
    "src/http/app.ts imports ../mcp/http-route.js (http -> mcp)",
    "src/inference/engine.ts imports ../conversation/run-turn.js (inference -> conversation)",
    "src/memory/recall.ts imports ../dreams/dream.js (memory -> dreams)",
    "src/processes/serve.ts imports ../cli.js (processes -> cli)",
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

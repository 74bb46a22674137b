// The unit tier's runner (npm run test:unit): each compiled test file in a plain `node` process,
// a few at once, the slowest first. tap's own runner adds a module hook to every file it starts
// (its process-info loader, which Node 20 runs on a thread of its own) that cost about half a
// second a file here, more than many unit files take (docs/developing.md, "Test tiers"). The
// files are tap's all the same: each prints TAP and exits non-zero when an assertion fails.
//
//   node scripts/run-tests.mjs [--jobs N] [--exclude dir,dir] [dir-or-file ...]
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(fileURLToPath(import.meta.url), "..", "..");
const timingsFile = join(root, "node_modules", ".cache", "psyche-tests", "timings.json");
const TIMEOUT_MS = 240_000; // as .taprc's timeout

function parseArgs(argv) {
  const out = { jobs: 3, exclude: [], paths: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--jobs") out.jobs = Math.max(1, Number(argv[++i]) || 1);
    else if (arg === "--exclude") out.exclude.push(...argv[++i].split(","));
    else out.paths.push(arg);
  }
  if (out.paths.length === 0) out.paths.push("dist/test");
  return out;
}

function testFiles(path, exclude) {
  const full = join(root, path);
  if (!existsSync(full)) {
    console.error(`run-tests: ${path} does not exist (the tests run compiled: npm run build, then dist/test/...)`);
    process.exit(2);
  }
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full).flatMap((name) => {
    const child = join(full, name);
    if (statSync(child).isDirectory()) {
      // Fixtures are data for tests, not tests; excluded folders are other tiers.
      if (["fixture", "fixtures", "node_modules"].includes(name) || exclude.includes(name)) return [];
      return testFiles(relative(root, child), exclude);
    }
    return name.endsWith(".test.js") ? [child] : [];
  });
}

function readTimings() {
  try {
    return JSON.parse(readFileSync(timingsFile, "utf8"));
  } catch {
    return {};
  }
}

/** One file in its own process: its output, held until it ends, and how it ended. */
function runFile(file) {
  return new Promise((resolve) => {
    const started = performance.now();
    // tap's own timeout for a file run alone is 30 s; the runner's is .taprc's.
    const env = { ...process.env, TAP_TIMEOUT: String(TIMEOUT_MS / 1000) };
    const child = spawn(process.execPath, [file], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n# timed out after ${TIMEOUT_MS / 1000} s\n`;
      child.kill("SIGKILL");
    }, TIMEOUT_MS + 10_000);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // A failed assertion sets the exit code; a top-level "not ok" is a failure all the same.
      const ok = code === 0 && !signal && !/^not ok /m.test(output);
      resolve({ file, ok, ms: performance.now() - started, output, code, signal });
    });
    running.add(child);
    child.on("exit", () => running.delete(child));
  });
}

/** The "not ok" lines of a file's TAP and the diagnostics under each, at most 40 lines in all. */
function failures(output) {
  const lines = output.split("\n");
  const out = [];
  lines.forEach((line, i) => {
    if (!/^\s*not ok /.test(line)) return;
    const indent = line.search(/\S/);
    out.push(line);
    for (let j = i + 1; j < lines.length && j <= i + 12; j++) {
      if (/^\s*(not )?ok /.test(lines[j]) || (lines[j].trim() && lines[j].search(/\S/) < indent)) break;
      out.push(lines[j]);
    }
  });
  const tail = out.length ? out : lines.slice(-15);
  return tail
    .slice(0, 40)
    .map((l) => `#   ${l}`)
    .join("\n");
}

const running = new Set();
for (const sig of ["SIGINT", "SIGTERM"])
  process.on(sig, () => {
    for (const child of running) child.kill("SIGKILL");
    process.exit(130);
  });

const args = parseArgs(process.argv.slice(2));
const timings = readTimings();
/** A file's time in the last run here; before any, a guess by its tier (end-to-end files are the long ones). */
const expected = (file) => {
  const name = relative(root, file);
  return timings[name] ?? (name.includes(`${sep}e2e${sep}`) ? 60_000 : name.includes(`${sep}engine${sep}`) ? 30_000 : 5_000);
};
const files = args.paths.flatMap((p) => testFiles(p, args.exclude)).sort((a, b) => expected(b) - expected(a));
const started = performance.now();
const results = [];
let next = 0;
async function worker() {
  while (next < files.length) {
    const result = await runFile(files[next++]);
    results.push(result);
    const name = relative(root, result.file).split(sep).join("/");
    console.log(`${result.ok ? "ok    " : "not ok"} ${(result.ms / 1000).toFixed(1).padStart(5)} s  ${name}`);
    if (!result.ok) console.log(result.output.replace(/^/gm, "    # "), `\n    # exit ${result.code ?? result.signal}`);
  }
}
await Promise.all(Array.from({ length: Math.min(args.jobs, files.length) }, worker));

for (const r of results) timings[relative(root, r.file)] = Math.round(r.ms);
if (existsSync(join(root, "node_modules"))) {
  mkdirSync(join(timingsFile, ".."), { recursive: true });
  writeFileSync(timingsFile, JSON.stringify(timings, null, 1));
}
const failed = results.filter((r) => !r.ok);
console.log(`\n# ${results.length} files, ${failed.length} failed, ${((performance.now() - started) / 1000).toFixed(1)} s`);
for (const r of failed) console.log(`# failed: ${relative(root, r.file)}`);
// Again, at the end, each failure's own lines: a CI log is often read from its tail.
for (const r of failed) console.log(`\n# ${relative(root, r.file)}, exit ${r.code ?? r.signal}:\n${failures(r.output)}`);
process.exitCode = failed.length || results.length === 0 ? 1 : 0;

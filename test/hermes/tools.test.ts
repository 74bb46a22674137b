// Hermes's local tools on real files: the workspace confinement (.., absolute paths, symlinks
// out, paths not yet there), each tool's result and errors, confirmation, and execute_bash's
// time limit and output cap. A tool never throws: its error is its result.
import t from "tap";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalTools, SAFE_TOOLS, type ToolOptions } from "../../src/hermes/tools.js";
import { OutsideWorkspace, Workspace } from "../../src/hermes/workspace.js";

const dir = t.testdir({
  ws: { "README.md": "# Demo\nA garden of files.\n", src: { "main.ts": "const garden = 1;\nconsole.log(garden);\n" } },
  "secret.txt": "outside\n",
});
const root = join(dir, "ws");
symlinkSync(join(dir, "secret.txt"), join(root, "escape.txt"));
symlinkSync(join(dir, "nowhere.txt"), join(root, "dangling.txt"));
symlinkSync(dir, join(root, "up"));

const asked: string[] = [];
const tools = (o: Partial<ToolOptions> = {}) =>
  new LocalTools(new Workspace(root), {
    confirm: async (name) => {
      asked.push(name);
      return true;
    },
    bashTimeoutMs: 5000,
    bashOutputChars: 1000,
    ...o,
  });
const run = (name: string, args: unknown, o: Partial<ToolOptions> = {}) =>
  tools(o).run(name, typeof args === "string" ? args : JSON.stringify(args));

t.test("the workspace: inside resolves, outside is refused however it is spelled", async (t) => {
  const ws = new Workspace(root);
  t.equal(ws.show(ws.resolve("src/main.ts")), "src/main.ts");
  t.equal(ws.show(ws.resolve("not/yet/there.txt")), "not/yet/there.txt", "a path not yet there, inside");
  t.equal(ws.show(ws.resolve("src/../README.md")), "README.md");
  t.throws(() => ws.resolve("../secret.txt"), OutsideWorkspace);
  t.throws(() => ws.resolve(join(dir, "secret.txt")), /absolute/);
  t.throws(() => ws.resolve("escape.txt"), /outside the workspace/, "a symlink to a file outside");
  t.throws(() => ws.resolve("up/secret.txt"), /outside the workspace/, "through a symlinked directory");
  t.throws(() => ws.resolve("up/new.txt"), /outside the workspace/, "a new file under a symlinked directory outside");
  t.throws(() => new Workspace(join(dir, "missing")), /does not exist/);
});

t.test("read-only tools: read, list, search", async (t) => {
  t.same(await run("read_file", { path: "README.md" }), { ok: true, output: "# Demo\nA garden of files.\n" });
  t.same(
    await run("list_directory", {}),
    { ok: true, output: "README.md\ndangling.txt@\nescape.txt@\nsrc/\nup@" },
    "symlinks marked @, as ls -F does",
  );
  t.same(await run("search_codebase", { query: "GARDEN", path: "src" }), {
    ok: true,
    output: "src/main.ts:1: const garden = 1;\nsrc/main.ts:2: console.log(garden);",
  });
  t.match(await run("search_codebase", { query: "nothing like this" }), { ok: true, output: /no line contains/ });
  t.match(await run("read_file", { path: "../secret.txt" }), { ok: false, output: /^error: refused: .* outside the workspace/ });
  t.match(await run("read_file", { path: "escape.txt" }), { ok: false, output: /outside the workspace/ });
  t.match(await run("read_file", { path: "missing.txt" }), { ok: false, output: /^error: ENOENT/ });
  t.match(await run("list_directory", { path: "README.md" }), { ok: false, output: /not a directory/ });
  t.same(asked, [], "read-only tools ask no one");
});

t.test("bad calls are results, not crashes", async (t) => {
  t.match(await run("read_file", "{not json"), { ok: false, output: /not JSON/ });
  t.match(await run("read_file", { path: 3 }), { ok: false, output: /bad arguments for read_file: path/ });
  t.match(await run("rm_rf", {}), { ok: false, output: /no tool named rm_rf/ });
  t.match(await tools().run("execute_bash", '{"command":"true"}', SAFE_TOOLS), {
    ok: false,
    output: /no tool named execute_bash here; the tools are read_file, list_directory, search_codebase/,
  });
});

t.test("create_file and edit_file: inside only, asked first, never overwriting by accident", async (t) => {
  asked.length = 0;
  t.match(await run("create_file", { path: "notes/today.md", content: "one\ntwo\n" }), {
    ok: true,
    output: "created notes/today.md (8 characters)",
  });
  t.equal(readFileSync(join(root, "notes/today.md"), "utf8"), "one\ntwo\n");
  t.match(await run("create_file", { path: "README.md", content: "x" }), { ok: false, output: /exists; use edit_file/ });
  t.match(await run("create_file", { path: "dangling.txt", content: "x" }), { ok: false });
  t.notOk(existsSync(join(dir, "nowhere.txt")), "a dangling symlink is not written through");
  t.match(await run("create_file", { path: "up/planted.txt", content: "x" }), { ok: false, output: /outside/ });
  t.notOk(existsSync(join(dir, "planted.txt")));
  t.match(await run("edit_file", { path: "notes/today.md", old_text: "two", new_text: "three" }), { ok: true });
  t.equal(readFileSync(join(root, "notes/today.md"), "utf8"), "one\nthree\n");
  t.match(await run("edit_file", { path: "notes/today.md", old_text: "four", new_text: "x" }), { ok: false, output: /not in/ });
  writeFileSync(join(root, "twice.txt"), "a a");
  t.match(await run("edit_file", { path: "twice.txt", old_text: "a", new_text: "b" }), { ok: false, output: /more than once/ });
  t.equal(readFileSync(join(root, "twice.txt"), "utf8"), "a a", "unchanged");
  t.same(asked, ["create_file", "create_file", "create_file", "edit_file", "edit_file", "edit_file"], "every change was asked about");
  const declined = await run("create_file", { path: "no.txt", content: "x" }, { confirm: async () => false });
  t.same(declined, { ok: false, output: "error: the user declined this call" });
  t.notOk(existsSync(join(root, "no.txt")));
});

t.test("execute_bash: in the workspace, exit status, a time limit that kills its children, an output cap", async (t) => {
  t.same(await run("execute_bash", { command: "pwd; echo out; echo err >&2" }), { ok: true, output: `${root}\nout\nerr\n[exit 0]` });
  t.match(await run("execute_bash", { command: "exit 3" }), { ok: false, output: "[exit 3]" });
  mkdirSync(join(dir, "marks"), { recursive: true });
  const started = Date.now();
  const slow = await run("execute_bash", { command: `(sleep 3; touch ${join(dir, "marks", "late")}) & sleep 10` }, { bashTimeoutMs: 300 });
  t.match(slow, { ok: false, output: /timed out after 0.3 s/ });
  t.ok(Date.now() - started < 5000, "it did not wait for the command");
  await new Promise((r) => setTimeout(r, 3500));
  t.notOk(existsSync(join(dir, "marks", "late")), "the command's background child was killed too");
  const loud = await run("execute_bash", { command: "yes | head -c 5000" }, { bashOutputChars: 100 });
  t.match(loud.output, /^(y\n){50}\n\[cut: 4900 more characters\]\n\[exit 0\]$/);
  const cancel = new AbortController();
  setTimeout(() => cancel.abort(), 200);
  t.match(await run("execute_bash", { command: "sleep 10" }, { signal: cancel.signal }), { ok: false, output: /cancelled/ });
});

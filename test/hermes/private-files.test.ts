// Secrets and ignored files in a real workspace: idle exploration (unattended) never reads them,
// not even their names in a listing; an attended read_file asks first; search never reads them.
import t, { type Test } from "tap";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PrivateFiles } from "../../src/hermes/private-files.js";
import { LocalTools, type ToolName } from "../../src/hermes/tools.js";
import { Workspace } from "../../src/hermes/workspace.js";

const SECRET = "sk-live-4242-do-not-send";
function workspace(t: Test): { root: string; ws: Workspace; files: PrivateFiles } {
  const root = t.testdir({
    ".env": `API_KEY=${SECRET}\n`,
    ".env.example": "API_KEY=\n",
    id_rsa: `-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRET}\n`,
    "id_rsa.pub": "ssh-ed25519 AAAA public\n",
    ".npmrc": `//registry.npmjs.org/:_authToken=${SECRET}\n`,
    ".aws": { credentials: `aws_secret_access_key = ${SECRET}\n` },
    ".gitignore": "notes-private.txt\nbuild-out/\n",
    "notes-private.txt": `my ${SECRET}\n`,
    "build-out": { "bundle.js": `const k = "${SECRET}";\n` },
    sub: { ".gitignore": "local.cfg\n", "local.cfg": `token=${SECRET}\n`, "code.ts": "export const ok = 1;\n" },
    "draft.plan": `plan ${SECRET}\n`,
    "README.md": "# A workspace\nAPI_KEY goes in .env\n",
  });
  const ws = new Workspace(root);
  return { root, ws, files: new PrivateFiles(ws.root, ["*.plan"]) };
}

t.test("what is private: the built-in secrets, the workspace's ignore files at every level, --idle-exclude", async (t) => {
  const { ws, files } = workspace(t);
  const at = (p: string, dir = false) => files.isPrivate(join(ws.root, p), dir);
  for (const p of [
    ".env",
    "id_rsa",
    ".npmrc",
    ".aws/credentials",
    "notes-private.txt",
    "build-out/bundle.js",
    "sub/local.cfg",
    "draft.plan",
    ".git/config",
  ])
    t.ok(at(p), `${p} is private`);
  t.ok(at(".aws", true), "a secret folder");
  t.ok(at("build-out", true), "an ignored folder");
  for (const p of [".env.example", "README.md", "sub/code.ts", "sub", ".gitignore"]) t.notOk(at(p, p === "sub"), `${p} is not`);
});

t.test("unattended: private files are neither read, nor searched, nor listed", async (t) => {
  const { ws, files } = workspace(t);
  const asked: ToolName[] = [];
  const tools = new LocalTools(ws, {
    confirm: async (n) => (asked.push(n), true),
    bashTimeoutMs: 1000,
    bashOutputChars: 1000,
    privateFiles: files,
    unattended: true,
  });
  for (const path of [
    ".env",
    "id_rsa",
    ".npmrc",
    ".aws/credentials",
    "notes-private.txt",
    "build-out/bundle.js",
    "sub/local.cfg",
    "draft.plan",
  ]) {
    const r = await tools.run("read_file", JSON.stringify({ path }));
    t.equal(r.ok, false, path);
    t.match(r.output, /is private .*not read while the user is away/);
    t.notMatch(r.output, SECRET);
  }
  const found = await tools.run("search_codebase", JSON.stringify({ query: "sk-live" }));
  t.notMatch(found.output, SECRET, "search finds nothing in private files");
  t.match(found.output, /no line contains "sk-live"\n\[\d+ private files or folders not searched\]/);
  const listed = await tools.run("list_directory", "{}");
  t.notMatch(listed.output, /\.env\n|id_rsa\n|\.npmrc|notes-private|build-out|draft\.plan/, "no private name is listed");
  t.match(listed.output, /\.env\.example/);
  t.match(listed.output, /id_rsa\.pub/);
  t.match(listed.output, /\[\d+ private entries not shown\]/);
  t.equal((await tools.run("read_file", JSON.stringify({ path: "README.md" }))).ok, true, "the rest reads as before");
  t.same(asked, [], "no one was asked: no one is there");
});

t.test("attended: read_file of a private file asks first; declined, it is not read", async (t) => {
  const { ws, files } = workspace(t);
  let answer = false;
  const asked: { name: ToolName; args: Record<string, unknown> }[] = [];
  const tools = new LocalTools(ws, {
    confirm: async (name, args) => (asked.push({ name, args }), answer),
    bashTimeoutMs: 1000,
    bashOutputChars: 1000,
    privateFiles: files,
  });
  const declined = await tools.run("read_file", JSON.stringify({ path: ".env" }));
  t.match(declined, { ok: false, output: "error: the user declined this call" });
  t.match(asked, [{ name: "read_file", args: { path: ".env", private: true } }], "asked, saying why");
  answer = true;
  t.match(
    await tools.run("read_file", JSON.stringify({ path: ".env" })),
    { ok: true, output: `API_KEY=${SECRET}\n` },
    "allowed, it is read",
  );
  t.equal((await tools.run("read_file", JSON.stringify({ path: "README.md" }))).ok, true);
  t.equal(asked.length, 2, "an ordinary file is not asked about");
  t.match((await tools.run("list_directory", "{}")).output, /\.env\n/, "attended listings show every name");
});

t.test("the workspace's own .git/info/exclude counts", async (t) => {
  const root = t.testdir({ ".git": { info: { exclude: "scratch/\n" } }, scratch: { "x.txt": "x" }, "y.txt": "y" });
  mkdirSync(join(root, "scratch", "deep"), { recursive: true });
  writeFileSync(join(root, "scratch", "deep", "z.txt"), "z");
  const files = new PrivateFiles(new Workspace(root).root);
  t.ok(files.isPrivate(join(new Workspace(root).root, "scratch", "deep", "z.txt")));
  t.notOk(files.isPrivate(join(new Workspace(root).root, "y.txt")));
});

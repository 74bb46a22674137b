// `psyche install claude-code` and `psyche uninstall claude-code` as a person runs them, on
// fixture settings files that hold entries of their own: added once, backed up, idempotent,
// and removed exactly, leaving everything else as it was.
import t, { type Test } from "tap";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../helpers/processes.js";

const FIXTURE_SETTINGS = {
  model: "opus",
  permissions: { allow: ["Bash(npm test:*)"] },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "/usr/local/bin/guard.sh" }] }],
    Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }],
  },
};
const FIXTURE_CLAUDE_JSON = {
  numStartups: 42,
  mcpServers: { github: { type: "http", url: "https://api.example.com/mcp" } },
  projects: { "/x": {} },
};

function fixture(t: Test) {
  const home = t.testdir();
  mkdirSync(join(home, ".claude"));
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify(FIXTURE_SETTINGS, null, 4));
  writeFileSync(join(home, ".claude.json"), JSON.stringify(FIXTURE_CLAUDE_JSON));
  const env = { HOME: home, PSYCHE_DATA_DIR: join(home, "data"), PSYCHE_PORT: "18999" };
  const read = (p: string) => JSON.parse(readFileSync(join(home, p), "utf8"));
  return { home, env, read };
}

t.test("user scope: dry run, install, again, uninstall", async (t) => {
  const { home, env, read } = fixture(t);
  const dry = await runCli(["install", "claude-code", "--dry-run"], env);
  t.equal(dry.code, 0, dry.out);
  t.match(dry.out, /settings\.json: would change/);
  t.match(dry.out, /UserPromptSubmit: added psyche hook user-prompt-submit/);
  t.same(read(".claude/settings.json"), FIXTURE_SETTINGS, "a dry run writes nothing");
  t.same(readdirSync(join(home, ".claude")), ["settings.json"]);

  const first = await runCli(["install", "claude-code", "--no-start"], env);
  t.equal(first.code, 0, first.out);
  const settings = read(".claude/settings.json");
  t.same(settings.model, "opus");
  t.same(settings.permissions, FIXTURE_SETTINGS.permissions);
  t.same(settings.hooks.Stop, FIXTURE_SETTINGS.hooks.Stop);
  t.same(settings.hooks.PreToolUse[0], FIXTURE_SETTINGS.hooks.PreToolUse[0], "the user's own PreToolUse hook stays first and whole");
  t.match(settings.hooks.PreToolUse[1], {
    matcher: "*",
    hooks: [{ type: "command", command: /psyche\.js"? hook pre-tool-use$/, timeout: Number }],
  });
  t.match(settings.hooks.PostToolUse, [{ matcher: "Bash", hooks: [{ command: /hook post-tool-use$/ }] }]);
  for (const event of ["SessionStart", "UserPromptSubmit", "SessionEnd"]) t.equal(settings.hooks[event].length, 1, event);
  const claudeJson = read(".claude.json");
  t.same(claudeJson.numStartups, 42);
  t.same(claudeJson.mcpServers.github, FIXTURE_CLAUDE_JSON.mcpServers.github);
  t.same(claudeJson.mcpServers.psyche, { type: "http", url: "http://127.0.0.1:18999/mcp" });
  const backups = readdirSync(join(home, ".claude")).filter((f) => f.startsWith("settings.json.psyche-backup-"));
  t.equal(backups.length, 1);
  t.same(JSON.parse(readFileSync(join(home, ".claude", backups[0]!), "utf8")), FIXTURE_SETTINGS, "the backup holds the file as it was");

  // The installed command really runs the hook (no server here: nothing printed, exit 0).
  const again = await runCli(["install", "claude-code", "--no-start"], env);
  t.match(again.out, /settings\.json: unchanged/);
  t.match(again.out, /already has Psyche's hook/);
  t.same(read(".claude/settings.json"), settings, "idempotent");
  t.equal(readdirSync(join(home, ".claude")).filter((f) => f.includes("backup")).length, 1, "no change, no new backup");

  const removed = await runCli(["uninstall", "claude-code"], env);
  t.equal(removed.code, 0, removed.out);
  t.match(removed.out, /Psyche was not running/);
  t.same(read(".claude/settings.json"), FIXTURE_SETTINGS, "uninstall leaves exactly what was there");
  t.same(read(".claude.json"), FIXTURE_CLAUDE_JSON);
});

t.test("project scope, --http hooks, and files it will not touch", async (t) => {
  const { home, env, read } = fixture(t);
  const project = join(home, "proj");
  mkdirSync(project);
  const { spawn } = await import("node:child_process");
  const { CLI } = await import("../helpers/processes.js");
  const inProject = (args: string[]) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: project, env: { ...process.env, ...env } });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("exit", (code) => resolve({ code, out }));
    });
  const r = await inProject(["install", "claude-code", "--project", "--http", "--no-start"]);
  t.equal(r.code, 0, r.out);
  const settings = read("proj/.claude/settings.json");
  t.match(
    settings.hooks.SessionStart,
    [{ hooks: [{ type: "command", command: /hook session-start$/ }] }],
    "session-start stays a command: it can start the server",
  );
  t.match(settings.hooks.UserPromptSubmit, [{ hooks: [{ type: "http", url: "http://127.0.0.1:18999/hooks/user-prompt-submit" }] }]);
  t.same(read("proj/.mcp.json"), { mcpServers: { psyche: { type: "http", url: "http://127.0.0.1:18999/mcp" } } });
  t.same(read(".claude/settings.json"), FIXTURE_SETTINGS, "the user's settings are not the project's");
  const u = await inProject(["uninstall", "claude-code", "--project"]);
  t.equal(u.code, 0, u.out);
  t.same(read("proj/.claude/settings.json"), {});
  t.same(read("proj/.mcp.json"), {});

  writeFileSync(join(home, ".claude", "settings.json"), "{ not json");
  const broken = await runCli(["install", "claude-code", "--no-start"], env);
  t.equal(broken.code, 1);
  t.match(broken.out, /settings\.json is not valid JSON.*Psyche will not overwrite it/);
  t.equal(readFileSync(join(home, ".claude", "settings.json"), "utf8"), "{ not json");
  writeFileSync(join(home, ".claude", "settings.json"), JSON.stringify({ hooks: { PreToolUse: "nope" } }));
  t.match((await runCli(["install", "claude-code", "--no-start"], env)).out, /"hooks" is not in Claude Code's shape/);
  t.equal((await runCli(["install", "cursor"], env)).code, 2);
  t.notOk(existsSync(join(home, ".claude", "settings.json.psyche-tmp")));
});

t.test("an older install's prompt hook, with Claude Code's 10 s, gets the time to wait for a starting server", async (t) => {
  const { env, read } = fixture(t);
  t.equal((await runCli(["install", "claude-code", "--no-start"], env)).code, 0);
  const settings = read(".claude/settings.json");
  t.ok(settings.hooks.UserPromptSubmit[0].hooks[0].timeout >= 40, "the prompt hook waits for a starting server, and Claude Code for it");
  t.equal(settings.hooks.PreToolUse[1].hooks[0].timeout, 10, "the others keep a short one");
  settings.hooks.UserPromptSubmit[0].hooks[0].timeout = 10;
  writeFileSync(join(env.HOME, ".claude", "settings.json"), JSON.stringify(settings));
  const again = await runCli(["install", "claude-code", "--no-start"], env);
  t.match(again.out, /UserPromptSubmit: Psyche's hook now has \d+ s/);
  const raised = read(".claude/settings.json").hooks.UserPromptSubmit;
  t.ok(raised[0].hooks[0].timeout >= 40, "raised in place");
  t.equal(raised.length, 1, "not a second hook beside it");
});

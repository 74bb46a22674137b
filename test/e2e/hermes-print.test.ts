/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// Hermes in print mode (`psyche chat -p`), a real process against a real server: with the tiny
// model a forced tool call runs in the workspace and its result reaches the model; with a
// scripted model, seed 001's chains (list, read, a path outside refused, a command declined
// without --yes and run with it), the iteration limit, a continued conversation; no server and
// a wrong key are readable failures, and so is a reply the server failed.
import t from "tap";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LocalTools } from "../../src/hermes/tools.js";
import { Workspace } from "../../src/hermes/workspace.js";
import { HERMES_BIN, runHermes } from "../helpers/hermes.js";
import { startPsyche } from "../helpers/psyche.js";
import { ScriptedEngine, sinceUser } from "../helpers/scripted-engine.js";
import { serverDir } from "../helpers/testdir.js";

const dir = serverDir(t);
const workspace = join(dir, "workspace");
mkdirSync(join(workspace, "src"), { recursive: true });
writeFileSync(join(workspace, "README.md"), "# Garden\nA workspace with a README.\n");
writeFileSync(join(workspace, "src", "main.ts"), "console.log('hi');\n");
writeFileSync(join(dir, "secret.txt"), "do not read\n");
symlinkSync(join(dir, "secret.txt"), join(workspace, "escape.txt"));

const messages = async (pool: any, conversation: string) =>
  (
    await pool.query(
      "select role, content, tool_calls, tool_call_id from messages where conversation_id = $1 and superseded_at is null order by position",
      [conversation],
    )
  ).rows;

t.test("the tiny model, forced to call list_directory: the tool runs here and its result reaches the model", async (t) => {
  const psyche = await startPsyche(t, { recallPromptTokens: 0 });
  const run = await runHermes(
    [
      "--server",
      psyche.url,
      "-p",
      "What is in this workspace?",
      "--tool-choice",
      "list_directory",
      "--seed",
      "1",
      "--max-tokens",
      "300",
      "--no-idle",
    ],
    { cwd: workspace },
  );
  t.equal(run.code, 0, run.stderr);
  const conversation = /conversation (hermes-[0-9a-f-]+)/.exec(run.stderr)?.[1];
  t.ok(conversation, "a new conversation, its id printed");
  t.match(run.stderr, /tool list_directory \{.*\} (ok|failed) \(\d+ ms\)/, "the tool's activity on stderr");
  const stored = await messages(psyche.db.pool, conversation!);
  t.same(
    stored.map((m: any) => m.role),
    ["user", "assistant", "tool", "assistant"],
    "asked, called, answered, replied",
  );
  const call = stored[1].tool_calls[0];
  t.equal(call.name, "list_directory");
  const expected = await new LocalTools(new Workspace(workspace), {
    confirm: async () => false,
    bashTimeoutMs: 1000,
    bashOutputChars: 100,
  }).run(call.name, call.arguments);
  t.equal(stored[2].content, expected.output, "the stored tool result is what the tool gives in this workspace");
  t.equal(run.stdout, `${stored[3].content}\n`, "the final reply on stdout, alone");
  const client = await psyche.db.pool.query("select name, left_at from clients");
  t.match(client.rows, [{ name: "hermes", left_at: Date }], "it said it was there, and that it left");
});

t.test("a scripted model: list, read, a path outside refused, a command declined without --yes, then a summary", async (t) => {
  const engine = new ScriptedEngine((request) => {
    const results = sinceUser(request)
      .after.filter((m) => m.role === "tool")
      .map((m) => m.content);
    const steps = [
      { name: "list_directory", arguments: {} },
      { name: "read_file", arguments: { path: "README.md" } },
      { name: "read_file", arguments: { path: "../secret.txt" } },
      { name: "execute_bash", arguments: { command: "touch made-by-bash.txt" } },
    ];
    if (results.length < steps.length) return { toolCalls: [steps[results.length]!] };
    return { text: results.map((r, i) => `${i + 1}: ${r.split("\n")[0]}`).join(" | ") };
  });
  const psyche = await startPsyche(t, {}, { engine });
  const run = await runHermes(["--server", psyche.url, "-p", "Look around", "--no-idle"], { cwd: workspace });
  t.equal(run.code, 0, run.stderr);
  t.equal(
    run.stdout,
    "1: README.md | 2: # Garden | 3: error: refused: ../secret.txt is outside the workspace | 4: error: the user declined this call\n",
  );
  t.match(run.stderr, /declined execute_bash \(print mode asks no one: pass --yes/);
  t.notOk(existsSync(join(workspace, "made-by-bash.txt")), "the declined command did not run");

  const yes = await runHermes(["--server", psyche.url, "-p", "Look around", "--yes", "--workspace", workspace], { cwd: dir });
  t.equal(yes.code, 0, yes.stderr);
  t.match(yes.stdout, /4: \[exit 0\]/);
  t.ok(existsSync(join(workspace, "made-by-bash.txt")), "with --yes it ran, in the workspace");
  t.notOk(existsSync(join(dir, "made-by-bash.txt")), "not in Hermes's own directory");
});

t.test("the iteration limit: after --max-tool-iterations rounds the model must answer without tools", async (t) => {
  const engine = new ScriptedEngine((request) =>
    request.toolChoice === "none" ? { text: "enough looking" } : { toolCalls: [{ name: "read_file", arguments: { path: "README.md" } }] },
  );
  const psyche = await startPsyche(t, {}, { engine });
  const run = await runHermes(["--server", psyche.url, "-p", "Read forever", "--max-tool-iterations", "2"], { cwd: workspace });
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout, "enough looking\n");
  t.equal(run.stderr.match(/tool read_file/g)?.length, 2, "two rounds of tools, no more");
});

t.test("--conversation continues one; files made by create_file and edit_file with --yes", async (t) => {
  const engine = new ScriptedEngine((request) => {
    const { user, after } = sinceUser(request);
    if (user.includes("create") && after.length === 0)
      return { toolCalls: [{ name: "create_file", arguments: { path: "notes/plan.md", content: "step one\n" } }] };
    if (user.includes("edit") && after.length === 0)
      return { toolCalls: [{ name: "edit_file", arguments: { path: "notes/plan.md", old_text: "one", new_text: "two" } }] };
    return { text: `${request.messages.filter((m) => m.role === "user").length} user messages so far` };
  });
  const psyche = await startPsyche(t, {}, { engine });
  const first = await runHermes(["--server", psyche.url, "-p", "create a plan", "--yes", "--conversation", "garden-plan"], {
    cwd: workspace,
  });
  t.equal(first.code, 0, first.stderr);
  t.equal(first.stdout, "1 user messages so far\n");
  t.notMatch(first.stderr, /conversation hermes-/, "a named conversation is not announced");
  const second = await runHermes(["--server", psyche.url, "-p", "now edit it", "--yes", "--conversation", "garden-plan"], {
    cwd: workspace,
  });
  t.equal(second.stdout, "2 user messages so far\n", "the server had the first exchange");
  t.equal(readFileSync(join(workspace, "notes", "plan.md"), "utf8"), "step two\n");
  t.same(
    (await messages(psyche.db.pool, "garden-plan")).map((m: any) => m.role),
    ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"],
  );
});

t.test("a reply the server failed: Hermes says why at once, not taken for a dropped stream", async (t) => {
  // A failed turn ends its stream with an error event. Hermes took that for a dropped stream,
  // replayed the turn's events, met the same error, and retried for a minute before "the server
  // did not come back".
  const engine = new ScriptedEngine(() => {
    throw new Error("the model fell over");
  });
  const psyche = await startPsyche(t, {}, { engine });
  const run = await runHermes(["--server", psyche.url, "-p", "hello", "--no-idle"], { cwd: workspace });
  t.equal(run.code, 1);
  t.match(run.stderr, /^hermes: the server failed this reply: generation failed: the model fell over$/m);
  t.notMatch(run.stderr, /reconnect|did not come back/, "no reconnecting");
  t.equal(run.stdout, "");
});

t.test("failures are one readable line and a non-zero exit", async (t) => {
  const none = await runHermes(["--server", "http://127.0.0.1:9", "-p", "hello"], { cwd: workspace });
  t.equal(none.code, 1);
  t.match(none.stderr, /^hermes: cannot reach a server at http:\/\/127\.0\.0\.1:9 \(is Psyche running\?/);
  t.notMatch(none.stderr, /\n\s+at /, "no stack trace");
  t.equal(none.stdout, "");

  const psyche = await startPsyche(t, { apiKey: "the-right-key" });
  const wrong = await runHermes(["--server", psyche.url, "-p", "hello", "--api-key", "wrong"], { cwd: workspace });
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, /refused the API key \(401\): pass --api-key or set PSYCHE_API_KEY/);
  const right = await runHermes(["--server", psyche.url, "-p", "hello", "--max-tokens", "4"], {
    cwd: workspace,
    env: { PSYCHE_API_KEY: "the-right-key" },
  });
  t.equal(right.code, 0, right.stderr);

  const usage = await runHermes(["--max-tool-iterations", "zero", "-p", "x"], { cwd: workspace });
  t.equal(usage.code, 2);
  t.match(usage.stderr, /^hermes: --max-tool-iterations: /);
  const missing = await runHermes(["--workspace", join(dir, "nope"), "-p", "x"], { cwd: workspace });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /the workspace .* does not exist/);
  const noTty = await runHermes(["--server", psyche.url], { cwd: workspace, env: { PSYCHE_API_KEY: "the-right-key" } });
  t.equal(noTty.code, 2);
  t.match(noTty.stderr, /needs a terminal; use -p/);
  const help = await runHermes(["--help"], { cwd: workspace, bin: HERMES_BIN });
  t.equal(help.code, 0);
  t.match(help.stdout, /^Usage: psyche chat \[flags\] +\(or: hermes \[flags\]\)/, "the hermes bin is the same client");
});

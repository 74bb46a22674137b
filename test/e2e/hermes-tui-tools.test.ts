/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// Hermes's tools in a real terminal (tmux), against servers with a scripted model: a tool that
// changes things asks first; idle exploration after --idle-after seconds offers only the
// read-only tools, is shown dimmed and stops when the user types; it never reads secrets or
// ignored files, and many ticks in a row leave a bounded number of memories. Without tmux this
// file is skipped; `npm run test:browser` installs Debian's tmux and runs it (CI).
import t from "tap";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PSYCHE_BIN } from "../helpers/hermes.js";
import { startPsyche } from "../helpers/psyche.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";
import type { GenerateRequest } from "../../src/inference/engine.js";
import { serverDir } from "../helpers/testdir.js";
import { hermesTerminal, squash } from "../helpers/tmux.js";
import { until } from "../helpers/until.js";

const terminal = hermesTerminal(t);
if (!terminal) process.exit(0);
const { tmux, pane, waitPane, alive } = terminal;
// Deeper than the 110-column terminal is wide: the status line must still fit on one line.
const workspace = join(serverDir(t), "workspace", "a-folder-deep-enough-that-its-path-outgrows-the-terminal".repeat(2));
mkdirSync(workspace, { recursive: true });
writeFileSync(join(workspace, "README.md"), "# A workspace\n");
const startHermesAt = (url: string, ...flags: string[]) => terminal.startHermesAt(url, workspace, ...flags);

t.test(
  "idle: after --idle-after seconds Hermes explores with the read-only tools only, dimmed, and stops when the user types",
  async (t) => {
    const idle = (r: GenerateRequest) => r.messages.some((m) => m.role === "user" && m.content.includes("the user has been away"));
    let explorations = 0;
    const engine = new ScriptedEngine((request) => {
      if (!idle(request)) return { text: "hello" };
      const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content);
      if (results.length === 0) {
        explorations++;
        // Asks for a command too: exploration must refuse it, even with --yes.
        return {
          toolCalls: [
            { name: "execute_bash", arguments: { command: "touch idle-bash.txt" } },
            { name: "list_directory", arguments: {} },
          ],
        };
      }
      if (explorations === 1) return { text: `I looked around: ${results.map((r) => r.split("\n")[0]).join(" / ")}` };
      return { text: "unreachable" };
    });
    const scripted = await startPsyche(t, {}, { engine });
    startHermesAt(scripted.url, "--idle-after", "1", "--idle-cooldown", "0", "--yes");
    // Generous: the first exploration comes a second after start-up, on a machine that may be busy.
    await waitPane("the first exploration", (p) => p.includes("idle · I looked around"), 90_000);
    const screen = pane();
    t.match(screen, /✗ execute_bash \{"command":"touch idle-bash.txt"\} failed/, "the command was refused");
    t.match(screen, /✓ list_directory \{\} ok/);
    t.match(screen, /idle ·/, "labelled as idle");
    t.ok(
      squash(screen).includes(
        squash(
          "I looked around: error: no tool named execute_bash here; the tools are read_file, list_directory, search_codebase / README.md",
        ),
      ),
      "the thought, with what the tools said",
    );
    t.notOk(existsSync(join(workspace, "idle-bash.txt")), "nothing ran but the read-only tools");
    // Psyche adds its own memory tools on the server (recall_memory, store_memory).
    const offered = engine.requests.filter(idle).map((r) =>
      (r.tools ?? [])
        .map((f) => f.name)
        .filter((n) => !n.endsWith("_memory"))
        .sort(),
    );
    t.same(offered[0], ["list_directory", "read_file", "search_codebase"], "only the read-only tools are offered");
    t.ok(engine.requests.some((r) => !idle(r)) === false, "no request but the exploration's");
    tmux("kill-session", "-t", "hermes");
    await until(
      "the goodbye of a Hermes whose terminal closed",
      async () =>
        (await scripted.db.pool.query("select count(*)::int as n from clients where left_at is null")).rows[0].n === 0 ? true : undefined,
      10_000,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify((await scripted.db.pool.query("select * from clients")).rows)}`);
    });
    t.pass("a closed terminal (SIGHUP) says goodbye: the client left at once");

    // A long cooldown between the two calls: the user types during it, and the exploration stops.
    startHermesAt(scripted.url, "--idle-after", "1", "--idle-cooldown", "30");
    await waitPane("the exploration's first tool", (p) => /✗ execute_bash/.test(p), 90_000);
    const asked = engine.requests.length;
    tmux("send-keys", "-t", "hermes", "-l", "b");
    await waitPane("the exploration to stop", (p) => p.includes("exploration stopped: you are back"));
    // The input line comes back once the stopped exploration's request has settled, a render
    // after the notice (CI caught the pane between the two).
    await waitPane("the input line back", (p) => /› b/.test(p)).catch(() => undefined);
    t.match(pane(), /› b/, "the key that stopped it is in the input");
    t.notMatch(pane().split("exploration stopped")[1] ?? "", /list_directory/, "the second tool never ran");
    await new Promise((r) => setTimeout(r, 500));
    t.equal(engine.requests.length, asked, "nothing more was asked of the model");
    // Two Ctrl-C quit, even when an idle exploration (--idle-after 1) starts between them: the
    // first arms the quit, the second finds the new exploration running and still quits.
    tmux("send-keys", "-t", "hermes", "C-c");
    await until("a new exploration after the first Ctrl-C", async () => (engine.requests.length > asked ? true : undefined), 60_000);
    t.ok(alive(), "one Ctrl-C does not quit");
    tmux("send-keys", "-t", "hermes", "C-c");
    await until("Hermes to exit on the second Ctrl-C", async () => (alive() ? undefined : true), 30_000);
  },
);

t.test("idle exploration never reads secrets or ignored files, and many ticks leave a bounded number of memories", async (t) => {
  const SECRET = "sk-live-9931-kept-home";
  const private_ = join(serverDir(t), "private-ws");
  mkdirSync(private_, { recursive: true });
  writeFileSync(join(private_, ".env"), `API_KEY=${SECRET}\n`);
  writeFileSync(join(private_, "id_rsa"), `-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRET}\n`);
  writeFileSync(join(private_, ".gitignore"), "scratch.txt\n");
  writeFileSync(join(private_, "scratch.txt"), `notes ${SECRET}\n`);
  writeFileSync(join(private_, "README.md"), "# Keys live in .env\n");
  const idle = (r: GenerateRequest) => r.messages.some((m) => m.role === "user" && m.content.includes("the user has been away"));
  const engine = new ScriptedEngine((request) => {
    if (!idle(request)) return { text: "hello" };
    const last = request.messages.at(-1)!;
    if (last.role !== "tool") {
      return {
        toolCalls: [
          { name: "read_file", arguments: { path: ".env" } },
          { name: "read_file", arguments: { path: "id_rsa" } },
          { name: "read_file", arguments: { path: "scratch.txt" } },
          { name: "search_codebase", arguments: { query: "sk-live" } },
          { name: "list_directory", arguments: {} },
        ],
      };
    }
    return { text: `Looked around ${request.messages.filter((m) => m.role === "tool").length} times.` };
  });
  const scripted = await startPsyche(t, {}, { engine });
  const command = [
    process.execPath,
    PSYCHE_BIN,
    "chat",
    "--server",
    scripted.url,
    "--workspace",
    private_,
    "--idle-after",
    "1",
    "--idle-cooldown",
    "0",
  ]
    .map((a) => `'${a}'`)
    .join(" ");
  if (alive()) tmux("kill-session", "-t", "hermes");
  tmux(
    "new-session",
    "-d",
    "-s",
    "hermes",
    "-x",
    "110",
    "-y",
    "40",
    `env -i PATH=${process.env.PATH} HOME=${process.env.HOME} TERM=xterm-256color ${command}`,
  );
  const explorations = async () =>
    (
      await scripted.db.pool.query(
        "select count(*)::int as n from turns where purpose = 'exploration' and status = 'done' and content like 'Looked around%'",
      )
    ).rows[0].n as number;
  await until("five idle explorations", async () => ((await explorations()) >= 5 ? true : undefined), 120_000);
  tmux("kill-session", "-t", "hermes");
  const results = engine.requests.flatMap((r) => r.messages.filter((m) => m.role === "tool").map((m) => m.content));
  t.ok(results.length >= 5, `${results.length} tool results went to the server`);
  t.notOk(
    results.some((r) => r.includes(SECRET)),
    "no secret in any tool result",
  );
  t.ok(
    results.some((r) => /\.env is private/.test(r)),
    "reading .env was refused",
  );
  t.ok(
    results.some((r) => /id_rsa is private/.test(r)),
    "reading id_rsa was refused",
  );
  t.ok(
    results.some((r) => /scratch\.txt is private/.test(r)),
    "reading an ignored file was refused",
  );
  t.notOk(
    results.some((r) => /^\.env$|^id_rsa$/m.test(r)),
    "not even their names are listed",
  );
  const done = await explorations();
  await until(
    "the memory jobs",
    async () =>
      (
        await scripted.db.pool.query(
          "select count(*)::int as n from pgboss.job where name = 'psyche-memory' and state in ('created', 'active', 'retry')",
        )
      ).rows[0].n === 0
        ? true
        : undefined,
    60_000,
  );
  const kept = (await scripted.db.pool.query("select content from memories where conversation_id like '%.idle' and deleted_at is null"))
    .rows;
  t.equal(kept.length, 1, `${done} explorations, one memory`);
  t.notOk(
    kept.some((m: any) => m.content.includes("the user has been away")),
    "what was found, not the prompt",
  );
});

t.test("a tool that changes things asks first: n declines it, y runs it", async (t) => {
  const engine = new ScriptedEngine((request) => {
    const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content);
    if (results.length === 0)
      return {
        toolCalls: [
          { name: "execute_bash", arguments: { command: "touch by-bash.txt" } },
          { name: "create_file", arguments: { path: "by-create.txt", content: "made\n" } },
        ],
      };
    return { text: `results: ${results.join(" | ")}` };
  });
  const scripted = await startPsyche(t, {}, { engine });
  startHermesAt(scripted.url, "--no-idle");
  await waitPane("the UI", (p) => p.includes("/help for commands"));
  t.match(pane(), /^…\S*terminal · \/help for commands *$/m, "a long workspace's path cut from its start, on one line");
  tmux("send-keys", "-t", "hermes", "-l", "make two files");
  tmux("send-keys", "-t", "hermes", "Enter");
  await waitPane("the first question", (p) => p.includes('Run execute_bash {"command":"touch by-bash.txt"}? [y/N]'));
  tmux("send-keys", "-t", "hermes", "-l", "n");
  await waitPane("the second question", (p) => p.includes('Run create_file {"path":"by-create.txt","content":"made\\n"}? [y/N]'));
  tmux("send-keys", "-t", "hermes", "-l", "y");
  await waitPane("the reply", (p) =>
    squash(p).includes(squash("results: error: the user declined this call | created by-create.txt (5 characters)")),
  );
  t.notOk(existsSync(join(workspace, "by-bash.txt")), "declined: not run");
  t.ok(existsSync(join(workspace, "by-create.txt")), "confirmed: run");
  t.match(pane(), /✗ execute_bash .* failed/);
  t.match(pane(), /✓ create_file .* ok/);
  await waitPane("the reply to be done", (p) => p.includes("/help for commands"));
  tmux("send-keys", "-t", "hermes", "-l", "/quit");
  tmux("send-keys", "-t", "hermes", "Enter");
  await until("Hermes to exit", async () => (alive() ? undefined : true), 30_000);
});

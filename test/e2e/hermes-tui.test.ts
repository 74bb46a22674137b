/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// Hermes's terminal UI in a real terminal (tmux: send-keys and capture-pane), as a person uses
// it, against a real server with the tiny model: type a message and see the reply and the
// status bar; a slash command; Ctrl-C cancels a reply in progress; /quit; a tool that changes
// things asks first (a scripted model). And presence: while
// Hermes is there Psyche does not dream, after it quits it dreams after the delay, and a
// Hermes that connects mid-dream wakes it. Without tmux this file is skipped; `npm run
// test:browser` installs Debian's tmux and runs it (CI).
import t from "tap";
import { execFileSync } from "node:child_process";
import { connect, createServer, type Socket } from "node:net";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PSYCHE_BIN } from "../helpers/hermes.js";
import { startPsyche } from "../helpers/psyche.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";
import type { GenerateRequest } from "../../src/inference/engine.js";
import { serverDir } from "../helpers/testdir.js";
import { until } from "../helpers/until.js";

const tmuxPath = ["/usr/bin/tmux", "/bin/tmux"].find((p) => existsSync(p));
if (!tmuxPath) {
  if (process.env.PSYCHE_TEST_TMUX === "required") throw new Error("no tmux: install Debian's tmux (npm run test:browser does)");
  t.plan(0, "no tmux; npm run test:browser installs it and runs this test");
  process.exit(0);
}

const socket = `psyche-test-${process.pid}`;
const tmux = (...args: string[]) => execFileSync(tmuxPath, ["-L", socket, ...args], { encoding: "utf8" });
t.teardown(() => {
  try {
    tmux("kill-server");
  } catch {
    /* no server left */
  }
});

// A presence TTL of 15 s (a heartbeat every 5 s): on a loaded machine a heartbeat can come
// seconds late, and a late one must not let a dream in while Hermes is there. Leaving is
// explicit (a goodbye), so no test waits for the TTL.
const psyche = await startPsyche(t, { recallPromptTokens: 0, dreamDelaySeconds: 2, dreamCooldownSeconds: 0, wakeLockSeconds: 0, presenceTtlSeconds: 15, dreamMaxTokens: 8, maxTokens: 1000 });
const pool = psyche.db.pool;
const json = { "content-type": "application/json" };
await fetch(`${psyche.url}/dream/config`, { method: "PATCH", headers: json, body: JSON.stringify({ idle_thoughts: false, reflection_threshold: 0 }) });
await fetch(`${psyche.url}/v1/memories`, { method: "POST", headers: json, body: JSON.stringify({ content: "The lighthouse keeper paints the lamp room every spring", importance: 0.8 }) });
const workspace = join(serverDir(t), "workspace");
mkdirSync(workspace, { recursive: true });
writeFileSync(join(workspace, "README.md"), "# A workspace\n");

const dreams = async () => (await pool.query("select count(*)::int as n from dream_journal where kind = 'dream'")).rows[0].n as number;
const pane = () => tmux("capture-pane", "-p", "-t", "hermes", "-S", "-200");
const waitPane = (what: string, test: (text: string) => boolean, ms = 30_000) => until(what, async () => (test(pane()) ? true : undefined), ms);
const alive = () => {
  try {
    tmux("has-session", "-t", "hermes");
    return true;
  } catch {
    return false;
  }
};
/** Starts Hermes in a fresh tmux session, 110x40, with a clean environment. */
function startHermes(...flags: string[]): void {
  startHermesAt(psyche.url, ...flags);
}
function startHermesAt(url: string, ...flags: string[]): void {
  if (alive()) tmux("kill-session", "-t", "hermes");
  const command = [process.execPath, PSYCHE_BIN, "chat", "--server", url, "--workspace", workspace, "--max-tokens", "1000", ...flags].map((a) => `'${a}'`).join(" ");
  tmux("new-session", "-d", "-s", "hermes", "-x", "110", "-y", "40", `env -i PATH=${process.env.PATH} HOME=${process.env.HOME} TERM=xterm-256color ${command}`);
}
const squash = (s: string) => s.replace(/\s+/g, "");

t.test("a conversation in the terminal: typed, streamed, the status bar, a slash command, Ctrl-C, /quit", async (t) => {
  const before = await dreams();
  startHermes("--no-idle");
  await waitPane("the UI", (p) => p.includes("/help for commands"));
  t.match(pane(), /Hermes · http:\/\/127\.0\.0\.1:\d+ \(Psyche\) · conversation hermes-/, "the header names the server and the conversation");

  tmux("send-keys", "-t", "hermes", "-l", "hello psyche");
  await waitPane("the typed text", (p) => p.includes("› hello psyche"));
  tmux("send-keys", "-t", "hermes", "Enter");
  const conversation = /conversation (hermes-[0-9a-f-]+)/.exec(pane())![1]!;
  const turn = await until("the reply", async () => (await pool.query("select id, content, status from turns where conversation_id = $1 and status = 'done'", [conversation])).rows[0]);
  await waitPane("the reply on screen", (p) => squash(p).includes(squash(turn.content).slice(0, 40)));
  await waitPane("the reply to be done", (p) => p.includes("/help for commands"));
  const screen = pane();
  t.match(screen, /you › hello psyche/);
  t.match(screen, /psyche › /, "the reply, labelled");
  await waitPane("the status bar", (p) => /mood \w+ \(v [+-]\d\.\d\d a [+-]\d\.\d\d\) · dream: \w+ · 1 client · hermes-/.test(p));
  t.pass("the status bar shows the mood, the dream state and the clients present");

  tmux("send-keys", "-t", "hermes", "-l", "/memories lighthouse");
  tmux("send-keys", "-t", "hermes", "Enter");
  await waitPane("the memories", (p) => p.includes("• [semantic] The lighthouse keeper paints the lamp room every spring"));
  t.pass("/memories lists what Psyche remembers");

  // Cancel: Ctrl-C while the reply is being written. A random model that ends a reply by itself
  // before the key arrives tests nothing: tried again, at most three times.
  for (let trial = 1; trial <= 3; trial++) {
    tmux("send-keys", "-t", "hermes", "-l", `tell me everything ${trial}`);
    tmux("send-keys", "-t", "hermes", "Enter");
    await waitPane("the reply to start", (p) => p.includes("thinking · Ctrl-C cancels"));
    tmux("send-keys", "-t", "hermes", "C-c");
    await waitPane("the reply to end", (p) => p.includes("/help for commands") || p.includes("Ctrl-C again to quit"));
    const last = await until("the turn to end", async () => (await pool.query("select status, completion_tokens, error from turns where conversation_id = $1 order by created_at desc limit 1", [conversation])).rows.find((r: any) => r.status !== "running" && r.status !== "queued"));
    if (last.status === "done" && last.completion_tokens < 1000 && trial < 3) continue;
    t.equal(last.status, "cancelled", `the server stopped the reply (${JSON.stringify(last)})`);
    t.match(pane(), /cancelled \(Ctrl-C again to quit\)/);
    break;
  }
  t.ok(alive(), "one Ctrl-C did not quit");
  // Counted from Hermes's arrival: on a busy machine its start-up may outlast the delay, and a
  // dream that began before anyone came is no fault (Hermes's arrival wakes it).
  const startedWhileHere = await pool.query("select count(*)::int as n from dream_journal where kind = 'dream' and started_at > (select max(connected_at) from clients where left_at is null)");
  t.equal(startedWhileHere.rows[0].n, 0, "no dream began while Hermes was there, with a two-second dream delay");

  tmux("send-keys", "-t", "hermes", "-l", "/quit");
  tmux("send-keys", "-t", "hermes", "Enter");
  await until("Hermes to exit", async () => (alive() ? undefined : true), 10_000);
  t.match((await pool.query("select left_at from clients")).rows, [{ left_at: Date }], "it said goodbye");
  await until("a dream after Hermes left", async () => ((await dreams()) > before ? true : undefined), 20_000);
  t.pass("once it left, Psyche dreamt after the delay");
});

t.test("a line pasted with its Enter is sent; several pasted lines are one message", async (t) => {
  // Short replies: three turns of a thousand tokens would outgrow the tiny model's context.
  startHermes("--no-idle", "--max-tokens", "40");
  await waitPane("the UI", (p) => p.includes("/help for commands"));
  const conversation = /conversation (hermes-[0-9a-f-]+)/.exec(pane())![1]!;
  const said = async () => (await pool.query("select content from messages where conversation_id = $1 and role = 'user' order by position", [conversation])).rows.map((r: any) => r.content as string);
  const settled = () => until("the turn to end", async () => ((await pool.query("select count(*)::int as n from turns where conversation_id = $1 and status in ('queued', 'running')", [conversation])).rows[0].n === 0 ? true : undefined), 60_000);

  // The text and its Enter in one send-keys: they reach Hermes as one read, as a paste does.
  tmux("send-keys", "-t", "hermes", "a pasted line", "Enter");
  await until("the pasted line to be sent", async () => ((await said()).length === 1 ? true : undefined), 30_000);
  t.same(await said(), ["a pasted line"], "sent as typed");
  await settled();
  await waitPane("the reply to be done", (p) => p.includes("/help for commands"));

  tmux("send-keys", "-t", "hermes", "-l", "first of two\nsecond of two\n");
  await until("the pasted lines to be sent", async () => ((await said()).length === 2 ? true : undefined), 30_000);
  t.same(await said(), ["a pasted line", "first of two\nsecond of two"], "two pasted lines, one message, sent by the Enter at their end");
  await settled();
  await waitPane("the reply to be done", (p) => p.includes("/help for commands"));

  // Lines pasted without an Enter at the end wait in the box, whole, for the user's Enter.
  tmux("send-keys", "-t", "hermes", "-l", "third\nfourth");
  await waitPane("the pasted lines in the box", (p) => p.includes("fourth"));
  t.equal((await said()).length, 2, "not sent without an Enter");
  tmux("send-keys", "-t", "hermes", "Enter");
  await until("the last message", async () => ((await said()).length === 3 ? true : undefined), 30_000);
  t.equal((await said())[2], "third\nfourth");
  await settled();
  await waitPane("the reply to be done", (p) => p.includes("/help for commands"));
  tmux("send-keys", "-t", "hermes", "-l", "/quit");
  tmux("send-keys", "-t", "hermes", "Enter");
  await until("Hermes to exit", async () => (alive() ? undefined : true), 10_000);
});

t.test("Hermes connecting mid-dream wakes it; Ctrl-C twice quits", async (t) => {
  // No dream by itself meanwhile: only the one queued here.
  await fetch(`${psyche.url}/dream/config`, { method: "PATCH", headers: json, body: JSON.stringify({ dream_delay_seconds: 0 }) });
  for (let trial = 1; trial <= 3; trial++) {
    const queued = (await (await fetch(`${psyche.url}/dream/jobs`, { method: "POST", headers: json, body: JSON.stringify({ kind: "dream", max_tokens: 4000 }) })).json()) as any;
    const jobId = queued.data[0].id;
    const row = async () => (await pool.query("select status, tokens from dream_journal where job_id = $1", [jobId])).rows[0];
    await until("the dream to start", async () => ((await row())?.status === "dreaming" ? true : undefined));
    startHermes("--no-idle");
    const ended = await until("the dream to end", async () => {
      const r = await row();
      return r && r.status !== "dreaming" ? r : undefined;
    });
    await waitPane("the UI", (p) => p.includes("/help for commands"));
    tmux("send-keys", "-t", "hermes", "C-c");
    await waitPane("the hint", (p) => p.includes("Ctrl-C again to quit"));
    t.ok(alive(), "the first Ctrl-C, with nothing to cancel, only warns");
    tmux("send-keys", "-t", "hermes", "C-c");
    await until("Hermes to exit", async () => (alive() ? undefined : true), 10_000);
    if (ended.status === "done" && ended.tokens < 4000 && trial < 3) continue;
    t.equal(ended.status, "interrupted", "Hermes's arrival woke the dream");
    break;
  }
});

t.test("idle: after --idle-after seconds Hermes explores with the read-only tools only, dimmed, and stops when the user types", async (t) => {
  const idle = (r: GenerateRequest) => r.messages.some((m) => m.role === "user" && m.content.includes("the user has been away"));
  let explorations = 0;
  const engine = new ScriptedEngine((request) => {
    if (!idle(request)) return { text: "hello" };
    const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content);
    if (results.length === 0) {
      explorations++;
      // Asks for a command too: exploration must refuse it, even with --yes.
      return { toolCalls: [{ name: "execute_bash", arguments: { command: "touch idle-bash.txt" } }, { name: "list_directory", arguments: {} }] };
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
  t.ok(squash(screen).includes(squash("I looked around: error: no tool named execute_bash here; the tools are read_file, list_directory, search_codebase / README.md")), "the thought, with what the tools said");
  t.notOk(existsSync(join(workspace, "idle-bash.txt")), "nothing ran but the read-only tools");
  // Psyche adds its own memory tools on the server (recall_memory, store_memory).
  const offered = engine.requests.filter(idle).map((r) => (r.tools ?? []).map((f) => f.name).filter((n) => !n.endsWith("_memory")).sort());
  t.same(offered[0], ["list_directory", "read_file", "search_codebase"], "only the read-only tools are offered");
  t.ok(engine.requests.some((r) => !idle(r)) === false, "no request but the exploration's");
  tmux("kill-session", "-t", "hermes");
  await until("the goodbye of a Hermes whose terminal closed", async () => ((await scripted.db.pool.query("select count(*)::int as n from clients where left_at is null")).rows[0].n === 0 ? true : undefined), 10_000).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify((await scripted.db.pool.query("select * from clients")).rows)}`);
  });
  t.pass("a closed terminal (SIGHUP) says goodbye: the client left at once");

  // A long cooldown between the two calls: the user types during it, and the exploration stops.
  startHermesAt(scripted.url, "--idle-after", "1", "--idle-cooldown", "30");
  await waitPane("the exploration's first tool", (p) => /✗ execute_bash/.test(p), 90_000);
  const asked = engine.requests.length;
  tmux("send-keys", "-t", "hermes", "-l", "b");
  await waitPane("the exploration to stop", (p) => p.includes("exploration stopped: you are back"));
  t.match(pane(), /› b/, "the key that stopped it is in the input");
  t.notMatch(pane().split("exploration stopped")[1] ?? "", /list_directory/, "the second tool never ran");
  await new Promise((r) => setTimeout(r, 500));
  t.equal(engine.requests.length, asked, "nothing more was asked of the model");
  tmux("send-keys", "-t", "hermes", "C-c");
  tmux("send-keys", "-t", "hermes", "C-c");
  await until("Hermes to exit", async () => (alive() ? undefined : true), 10_000);
});

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
  const command = [process.execPath, PSYCHE_BIN, "chat", "--server", scripted.url, "--workspace", private_, "--idle-after", "1", "--idle-cooldown", "0"].map((a) => `'${a}'`).join(" ");
  if (alive()) tmux("kill-session", "-t", "hermes");
  tmux("new-session", "-d", "-s", "hermes", "-x", "110", "-y", "40", `env -i PATH=${process.env.PATH} HOME=${process.env.HOME} TERM=xterm-256color ${command}`);
  const explorations = async () => (await scripted.db.pool.query("select count(*)::int as n from turns where purpose = 'exploration' and status = 'done' and content like 'Looked around%'")).rows[0].n as number;
  await until("five idle explorations", async () => ((await explorations()) >= 5 ? true : undefined), 120_000);
  tmux("kill-session", "-t", "hermes");
  const results = engine.requests.flatMap((r) => r.messages.filter((m) => m.role === "tool").map((m) => m.content));
  t.ok(results.length >= 5, `${results.length} tool results went to the server`);
  t.notOk(results.some((r) => r.includes(SECRET)), "no secret in any tool result");
  t.ok(results.some((r) => /\.env is private/.test(r)), "reading .env was refused");
  t.ok(results.some((r) => /id_rsa is private/.test(r)), "reading id_rsa was refused");
  t.ok(results.some((r) => /scratch\.txt is private/.test(r)), "reading an ignored file was refused");
  t.notOk(results.some((r) => /^\.env$|^id_rsa$/m.test(r)), "not even their names are listed");
  const done = await explorations();
  await until("the memory jobs", async () => ((await scripted.db.pool.query("select count(*)::int as n from pgboss.job where name = 'psyche-memory' and state in ('created', 'active', 'retry')")).rows[0].n === 0 ? true : undefined), 60_000);
  const kept = (await scripted.db.pool.query("select content from memories where conversation_id like '%.idle' and deleted_at is null")).rows;
  t.equal(kept.length, 1, `${done} explorations, one memory`);
  t.notOk(kept.some((m: any) => m.content.includes("the user has been away")), "what was found, not the prompt");
});

t.test("a tool that changes things asks first: n declines it, y runs it", async (t) => {
  const engine = new ScriptedEngine((request) => {
    const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content);
    if (results.length === 0) return { toolCalls: [{ name: "execute_bash", arguments: { command: "touch by-bash.txt" } }, { name: "create_file", arguments: { path: "by-create.txt", content: "made\n" } }] };
    return { text: `results: ${results.join(" | ")}` };
  });
  const scripted = await startPsyche(t, {}, { engine });
  startHermesAt(scripted.url, "--no-idle");
  await waitPane("the UI", (p) => p.includes("/help for commands"));
  tmux("send-keys", "-t", "hermes", "-l", "make two files");
  tmux("send-keys", "-t", "hermes", "Enter");
  await waitPane("the first question", (p) => p.includes('Run execute_bash {"command":"touch by-bash.txt"}? [y/N]'));
  tmux("send-keys", "-t", "hermes", "-l", "n");
  await waitPane("the second question", (p) => p.includes('Run create_file {"path":"by-create.txt","content":"made\\n"}? [y/N]'));
  tmux("send-keys", "-t", "hermes", "-l", "y");
  await waitPane("the reply", (p) => squash(p).includes(squash("results: error: the user declined this call | created by-create.txt (5 characters)")));
  t.notOk(existsSync(join(workspace, "by-bash.txt")), "declined: not run");
  t.ok(existsSync(join(workspace, "by-create.txt")), "confirmed: run");
  t.match(pane(), /✗ execute_bash .* failed/);
  t.match(pane(), /✓ create_file .* ok/);
  await waitPane("the reply to be done", (p) => p.includes("/help for commands"));
  tmux("send-keys", "-t", "hermes", "-l", "/quit");
  tmux("send-keys", "-t", "hermes", "Enter");
  await until("Hermes to exit", async () => (alive() ? undefined : true), 10_000);
});

t.test("a server out of reach shows 'reconnecting…' in the status bar, and clears once it is back", async (t) => {
  // A TCP proxy in front of the server that can stop answering, as a restarting server does.
  const target = new URL(psyche.url);
  let down = false;
  const open = new Set<Socket>();
  const proxy = createServer((client) => {
    if (down) return client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    open.add(client);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => open.delete(client));
  });
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  t.teardown(() => proxy.close());
  startHermesAt(`http://127.0.0.1:${(proxy.address() as { port: number }).port}`, "--no-idle");
  await waitPane("the status bar", (p) => /mood \w+ .* · 1 client/.test(p));
  t.notMatch(pane(), /reconnecting…/);
  down = true;
  for (const s of open) s.destroy();
  await waitPane("reconnecting", (p) => p.includes("reconnecting…"), 30_000);
  t.pass("the status bar says it is reconnecting");
  down = false;
  await waitPane("back", (p) => !p.includes("reconnecting…"), 30_000);
  t.pass("and clears once the server answers again");
  t.ok(alive(), "Hermes stayed up throughout");
  tmux("send-keys", "-t", "hermes", "-l", "/quit");
  tmux("send-keys", "-t", "hermes", "Enter");
  await until("Hermes to exit", async () => (alive() ? undefined : true), 10_000);
});

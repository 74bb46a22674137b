/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// Hermes's terminal UI in a real terminal (tmux: send-keys and capture-pane), as a person uses
// it, against a real server with the tiny model: type a message and see the reply and the
// status bar; a pasted line; a slash command; Ctrl-C cancels a reply in progress; /quit; a
// server out of reach. And presence: while Hermes is there Psyche does not dream, after it
// quits it dreams after the delay, and a Hermes that connects mid-dream wakes it. Tools and
// idle exploration, with a scripted model, are in hermes-tui-tools.test.ts. Without tmux this
// file is skipped; `npm run test:browser` installs Debian's tmux and runs it (CI).
import t from "tap";
import { connect, createServer, type Socket } from "node:net";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startPsyche } from "../helpers/psyche.js";
import { serverDir } from "../helpers/testdir.js";
import { hermesTerminal, squash } from "../helpers/tmux.js";
import { until } from "../helpers/until.js";

const terminal = hermesTerminal(t);
if (!terminal) process.exit(0);
const { tmux, pane, waitPane, alive } = terminal;

// A presence TTL of 15 s (a heartbeat every 5 s): on a loaded machine a heartbeat can come
// seconds late, and a late one must not let a dream in while Hermes is there. Leaving is
// explicit (a goodbye), so no test waits for the TTL.
const psyche = await startPsyche(t, {
  recallPromptTokens: 0,
  dreamDelaySeconds: 2,
  dreamCooldownSeconds: 0,
  wakeLockSeconds: 0,
  presenceTtlSeconds: 15,
  dreamMaxTokens: 8,
  maxTokens: 1000,
});
const pool = psyche.db.pool;
const json = { "content-type": "application/json" };
/** What the server's tables said when a wait gave up: its latest turns, its queues, its latest dream. */
const serverState = async () => {
  const turns = await pool.query(
    `select status, attempts, completion_tokens, error, created_at, started_at, finished_at
     from turns order by created_at desc limit 4`,
  );
  const jobs = await pool.query("select name, state, count(*)::int as n from pgboss.job group by 1, 2 order by 1, 2");
  const dream = await pool.query("select status, tokens, started_at, ended_at from dream_journal order by started_at desc limit 1");
  return `at ${new Date().toISOString()}: turns ${JSON.stringify(turns.rows)}; jobs ${JSON.stringify(jobs.rows)}; last dream ${JSON.stringify(dream.rows)}`;
};
await fetch(`${psyche.url}/dream/config`, {
  method: "PATCH",
  headers: json,
  body: JSON.stringify({ idle_thoughts: false, reflection_threshold: 0 }),
});
await fetch(`${psyche.url}/v1/memories`, {
  method: "POST",
  headers: json,
  body: JSON.stringify({ content: "The lighthouse keeper paints the lamp room every spring", importance: 0.8 }),
});
const workspace = join(serverDir(t), "workspace");
mkdirSync(workspace, { recursive: true });
writeFileSync(join(workspace, "README.md"), "# A workspace\n");

const dreams = async () => (await pool.query("select count(*)::int as n from dream_journal where kind = 'dream'")).rows[0].n as number;
const startHermes = (...flags: string[]) => terminal.startHermesAt(psyche.url, workspace, ...flags);
const startHermesAt = (url: string, ...flags: string[]) => terminal.startHermesAt(url, workspace, ...flags);

t.test("a conversation in the terminal: typed, streamed, the status bar, a slash command, Ctrl-C, /quit", async (t) => {
  const before = await dreams();
  startHermes("--no-idle");
  await waitPane("the UI", (p) => p.includes("/help for commands") && /conversation hermes-[0-9a-f-]+/.test(p), 90_000);
  t.match(
    pane(),
    /Hermes · http:\/\/127\.0\.0\.1:\d+ \(Psyche\) · conversation hermes-/,
    "the header names the server and the conversation",
  );

  tmux("send-keys", "-t", "hermes", "-l", "hello psyche");
  await waitPane("the typed text", (p) => p.includes("› hello psyche"));
  tmux("send-keys", "-t", "hermes", "Enter");
  const conversation = /conversation (hermes-[0-9a-f-]+)/.exec(pane())![1]!;
  const turn = await until(
    "the reply",
    async () =>
      (await pool.query("select id, content, status from turns where conversation_id = $1 and status = 'done'", [conversation])).rows[0],
    30_000,
    serverState,
  );
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
    const last = await until("the turn to end", async () =>
      (
        await pool.query("select status, completion_tokens, error from turns where conversation_id = $1 order by created_at desc limit 1", [
          conversation,
        ])
      ).rows.find((r: any) => r.status !== "running" && r.status !== "queued"),
    );
    if (last.status === "done" && last.completion_tokens < 1000 && trial < 3) continue;
    t.equal(last.status, "cancelled", `the server stopped the reply (${JSON.stringify(last)})`);
    t.match(pane(), /cancelled \(Ctrl-C again to quit\)/);
    break;
  }
  t.ok(alive(), "one Ctrl-C did not quit");
  // Counted from Hermes's arrival: on a busy machine its start-up may outlast the delay, and a
  // dream queued before anyone came is no fault (the scheduler's promise is not to queue one
  // while a client is here; see the closing note of this change on a job queued just before).
  const queuedWhileHere = await pool.query(
    `select count(*)::int as n from dream_journal d join pgboss.job j on j.id = d.job_id
     where d.kind = 'dream' and j.created_on > (select max(connected_at) from clients where left_at is null)`,
  );
  t.equal(queuedWhileHere.rows[0].n, 0, "no dream was queued while Hermes was there, with a two-second dream delay");

  tmux("send-keys", "-t", "hermes", "-l", "/quit");
  tmux("send-keys", "-t", "hermes", "Enter");
  await until("Hermes to exit", async () => (alive() ? undefined : true), 10_000);
  // Hermes gives its goodbye two seconds and then exits; on a loaded machine the server may
  // write it a moment after Hermes has gone.
  const left = await until(
    "the goodbye to be written",
    async () => {
      const rows = (await pool.query("select left_at from clients")).rows;
      return rows.every((r: any) => r.left_at !== null) ? rows : undefined;
    },
    10_000,
  ).catch(async () => (await pool.query("select left_at from clients")).rows);
  t.match(left, [{ left_at: Date }], "it said goodbye");
  await until("a dream after Hermes left", async () => ((await dreams()) > before ? true : undefined), 20_000);
  t.pass("once it left, Psyche dreamt after the delay");
});

t.test("a line pasted with its Enter is sent; several pasted lines are one message", async (t) => {
  // Short replies: three turns of a thousand tokens would outgrow the tiny model's context.
  startHermes("--no-idle", "--max-tokens", "40");
  // The status bar names the conversation a moment after the prompt is drawn. Starting takes
  // well over 30 s when another end-to-end file loads both cores.
  await waitPane("the UI", (p) => p.includes("/help for commands") && /conversation hermes-[0-9a-f-]+/.test(p), 90_000);
  const conversation = /conversation (hermes-[0-9a-f-]+)/.exec(pane())![1]!;
  const said = async () =>
    (
      await pool.query("select content from messages where conversation_id = $1 and role = 'user' order by position", [conversation])
    ).rows.map((r: any) => r.content as string);
  const settled = () =>
    until(
      "the turn to end",
      async () =>
        (
          await pool.query("select count(*)::int as n from turns where conversation_id = $1 and status in ('queued', 'running')", [
            conversation,
          ])
        ).rows[0].n === 0
          ? true
          : undefined,
      60_000,
      serverState,
    );

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
    const queued = (await (
      await fetch(`${psyche.url}/dream/jobs`, { method: "POST", headers: json, body: JSON.stringify({ kind: "dream", max_tokens: 4000 }) })
    ).json()) as any;
    const jobId = queued.data[0].id;
    const row = async () => (await pool.query("select status, tokens from dream_journal where job_id = $1", [jobId])).rows[0];
    await until("the dream to start", async () => ((await row())?.status === "dreaming" ? true : undefined), 30_000, serverState);
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
    t.equal(ended.status, "paused", "Hermes's arrival woke the dream");
    break;
  }
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

/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// The local Procfile's layout (`psyche db`, `web` and `inference` as separate processes) with the
// database killed during a long stream and back three seconds later: web and inference live on,
// the interrupted turn ends (resumed, or failed with a message) soon after the database returns
// instead of staying `running` under a worker that is alive, and new chats are answered.
import t from "tap";
import { existsSync } from "node:fs";
import { createPool } from "../../src/db/pool.js";
import { CLI, runCli, startCli, type Proc } from "../helpers/processes.js";
import { until } from "../helpers/until.js";
import { EMBEDDED_ONLY } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";

if (EMBEDDED_ONLY) {
  t.plan(0, `${EMBEDDED_ONLY}: it restarts the embedded database, which it owns`);
  process.exit(0);
}
if (!existsSync(CLI)) {
  t.fail(`${CLI} is missing: run npm run build (npm test does)`);
  process.exit(1);
}

const dataDir = serverDir(t);
const quietEnv = { PSYCHE_LOG_LEVEL: "warn", PSYCHE_DATA_DIR: dataDir };
const procs: Proc[] = [];
t.teardown(async () => {
  for (const p of procs.reverse()) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  }
});

const startDb = async (port: string) => {
  const db = await startCli(["db", "--db-port", port], quietEnv, /(postgresql:\/\/\S+)/);
  procs.push(db);
  return db;
};
let db = await startDb("0");
const url = db.match[1]!;
const port = new URL(url).port;
const env = {
  ...quietEnv,
  DATABASE_URL: url,
  PSYCHE_POLL_MS: "100",
  PSYCHE_HEARTBEAT_MS: "500",
  PSYCHE_THREADS: "1",
  PSYCHE_MAX_TOKENS: "8000",
  PSYCHE_RECALL_PROMPT_TOKENS: "0",
};
t.test("a turn streaming while the database restarts ends once it is back", async (t) => {
  t.equal((await runCli(["migrate"], env)).code, 0);
  const web = await startCli(["web", "--port", "0"], env, /listening on (http:\/\/\S+)/);
  procs.push(web);
  const api = web.match[1]!;
  const inference = await startCli(["inference"], env, /inference worker \S+ running/);
  procs.push(inference);
  // A story still being written when the database is killed. The relay follows the stored
  // events, so an engine built for a fast machine can have written the whole story while its
  // first chunks are still on their way to the client, leaving nothing to interrupt (it was then
  // "done" on its first attempt): then another story is asked for.
  const statusOf = async (id: string): Promise<string | undefined> => {
    const probe = createPool(url, 1);
    try {
      return (await probe.query("select status from turns where id = $1", [id])).rows[0]?.status;
    } finally {
      await probe.end();
    }
  };
  const decoder = new TextDecoder();
  let turnId = "";
  let reader!: ReadableStreamDefaultReader<Uint8Array>;
  let streamed = "";
  for (let seed = 3; ; seed++) {
    const res = await fetch(`${api}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "psyche",
        messages: [{ role: "user", content: "Tell me a very long story" }],
        max_tokens: 2000,
        stream: true,
        seed,
      }),
    });
    t.equal(res.status, 200);
    turnId = res.headers.get("x-psyche-turn")!;
    reader = res.body!.getReader();
    streamed = "";
    // Until the story is under way: a couple of chunks in.
    while ((streamed.match(/chat\.completion\.chunk/g) ?? []).length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      streamed += decoder.decode(value);
    }
    if ((await statusOf(turnId)) === "running") break;
    await reader.cancel();
    if (seed >= 7) throw new Error("every story was written whole before its second chunk was relayed");
  }
  db.child.kill("SIGKILL");
  await db.exited;
  // The rest of the stream ends one way or another while the database is away.
  const rest = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      streamed += decoder.decode(value);
    }
  })();
  await new Promise((r) => setTimeout(r, 3000));
  db = await startDb(port);
  const back = Date.now();
  const pool = createPool(url, 2);
  t.teardown(() => pool.end());
  const row = async () =>
    (
      await pool
        .query("select status, error, attempts, length(content) as chars from turns where id = $1", [turnId])
        .catch(() => ({ rows: [] as any[] }))
    ).rows[0];
  // What the fix controls: the worker takes the turn up again (a new attempt) or ends it once the
  // database answers; how long the rest of the story then takes is the machine's speed.
  const resumed = await until(
    "the interrupted turn to be taken up again",
    async () => {
      const r = await row();
      return r && (r.attempts >= 2 || !["queued", "running"].includes(r.status)) ? r : undefined;
    },
    60_000,
  ).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(await row())}\ninference worker's log:\n${inference.output().slice(-6000)}`);
  });
  t.pass(`taken up again ${Date.now() - back} ms after the database came back: ${JSON.stringify(resumed)}`);
  const ended = await until(
    "the interrupted turn to end",
    async () => {
      const r = await row();
      return r && !["queued", "running"].includes(r.status) ? r : undefined;
    },
    120_000,
  );
  t.ok(
    (ended.status === "done" && ended.attempts >= 2) || (ended.status === "failed" && /\w/.test(ended.error ?? "")),
    `resumed (a second attempt), or failed with a message: ${JSON.stringify(ended)}`,
  );
  await rest;
  t.equal(inference.child.exitCode, null, "the inference worker lived on");
  t.equal(web.child.exitCode, null, "the web process lived on");

  const next = await until(
    "a new chat to be answered",
    async () => {
      const r = await fetch(`${api}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "Are you there?" }], max_tokens: 8 }),
      }).catch(() => undefined);
      return r?.status === 200 ? ((await r.json()) as any) : undefined;
    },
    60_000,
  );
  t.equal(next.choices[0].finish_reason, "length");
  // Its stream, resumed from the turn's events, ends too.
  const replay = await fetch(`${api}/v1/turns/${turnId}/events?after=0`);
  t.equal(replay.status, 200);
  t.match(await replay.text(), /\[DONE\]|"error"/, "the turn's own stream ends");
});

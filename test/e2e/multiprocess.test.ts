/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// The Procfile's shape: `psyche db`, `psyche migrate`, `psyche web` and `psyche inference` as
// separate OS processes that meet only in Postgres. The inference worker is killed mid-turn:
// the turn is retried after a new worker starts and completes once.
import t from "tap";
import { existsSync } from "node:fs";
import { createPool } from "../../src/db/pool.js";
import { CLI, runCli, startCli, type Proc } from "../helpers/processes.js";
import { until } from "../helpers/until.js";
import { EMBEDDED_ONLY, testDatabaseUrl } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";

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

// `psyche db`, or with PSYCHE_TEST_POSTGRES a real PostgreSQL, where LISTEN/NOTIFY crosses processes.
const realPostgres = await testDatabaseUrl(dataDir);
const db = realPostgres ? undefined : await startCli(["db", "--db-port", "0"], quietEnv, /(postgresql:\/\/\S+)/);
if (db) procs.push(db);
const env = {
  ...quietEnv,
  DATABASE_URL: realPostgres ?? db!.match[1]!,
  PSYCHE_POLL_MS: "100",
  PSYCHE_HEARTBEAT_MS: "500",
  PSYCHE_THREADS: "1",
  PSYCHE_MAX_TOKENS: "4000",
  PSYCHE_DREAM_DELAY_SECONDS: "0",
};
const pool = createPool(env.DATABASE_URL, 2);
t.teardown(async () => {
  if (!pool.ending) await pool.end();
});

t.test("migrate applies, then finds nothing to do", async (t) => {
  const first = await runCli(["migrate"], env);
  t.equal(first.code, 0, first.out);
  t.match(first.out, /applied 000001_init\.sql/);
  const again = await runCli(["migrate"], env);
  t.match(again.out, /up to date/);
});

t.test("web and inference as separate processes; the worker dies mid-turn", async (t) => {
  const web = await startCli(["web", "--port", "0"], env, /listening on (http:\/\/\S+)/);
  procs.push(web);
  const url = web.match[1]!;
  let inference = await startCli(["inference"], env, /inference worker \S+ running/);
  procs.push(inference);

  const health = (await (await fetch(`${url}/health`)).json()) as any;
  t.equal(health.worker.alive, true, "the web process sees the worker through Postgres");
  // MCP is the web process's too: stateless, so a web process alone answers it.
  const mcp = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "dream_status", arguments: {} } }),
  });
  t.equal(mcp.status, 200);
  t.match(((await mcp.json()) as any).result.structuredContent, { state: /^(sleeping|awake)$/ }, "psyche web answers MCP");

  // The web process has no model, only its vocabulary: it counts a prompt against the context
  // the worker recorded (the tiny model's 4,096 tokens) and refuses one past it up front.
  const turnsBefore = (await pool.query("select count(*)::int as n from turns")).rows[0].n;
  const long = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "the dream journal keeps it. ".repeat(2000) }] }),
  });
  const refused = (await long.json()) as any;
  t.equal(long.status, 400, JSON.stringify(refused));
  t.equal(refused.error?.code, "context_length_exceeded");
  t.match(refused.error?.message, /maximum context length is 4096 tokens/);
  t.equal((await pool.query("select count(*)::int as n from turns")).rows[0].n, turnsBefore, "nothing stored");

  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "psyche",
      messages: [{ role: "user", content: "tell me everything" }],
      max_tokens: 3000,
      stream: true,
      seed: 4,
    }),
  });
  t.equal(res.status, 200);
  const turnId = res.headers.get("x-psyche-turn")!;
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let sse = "";
  // Kill the worker as soon as text is flowing.
  while (!/"content":"[^"]/.test(sse)) {
    const { value, done } = await reader.read();
    if (done) break;
    sse += decoder.decode(value, { stream: true });
  }
  inference.child.kill("SIGKILL");
  t.equal(await inference.exited, "SIGKILL");
  const mid = (await pool.query("select status, attempts from turns where id = $1", [turnId])).rows[0];
  t.equal(mid.status, "running", "the turn was mid-generation when the worker died");

  inference = await startCli(["inference"], env, /inference worker \S+ running/);
  procs.push(inference);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    sse += decoder.decode(value, { stream: true });
  }
  t.match(sse, /data: \[DONE\]\n\n$/, "the client's stream went on to the end");
  const content = sse
    .split("\n\n")
    .map((b) => /^data: (\{.*\})$/m.exec(b)?.[1])
    .filter((d): d is string => d !== undefined)
    .map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? "")
    .join("");

  const turn = (await pool.query("select status, attempts, content, completion_tokens, finish_reason from turns where id = $1", [turnId]))
    .rows[0];
  t.equal(turn.status, "done");
  t.equal(turn.attempts, 2, "retried once, by the new worker");
  // The random model rarely ends a reply itself, but it can, after thousands of tokens; a
  // reply cut by max_tokens must have exactly that many.
  if (turn.finish_reason === "length") t.equal(turn.completion_tokens, 3000, "no token lost or generated twice");
  else t.ok(turn.finish_reason === "stop" && turn.completion_tokens < 3000, `ended by the model after ${turn.completion_tokens} tokens`);
  t.equal(content, turn.content, "what the client received is the stored reply: nothing lost, nothing twice");
  const replies = await pool.query("select count(*)::int as n from messages where turn_id = $1 and role = 'assistant'", [turnId]);
  t.equal(replies.rows[0].n, 1, "one reply stored");
  const jobs = await pool.query(
    "select state::text, count(*)::int as n from pgboss.job where name = 'psyche-inference' and data->>'turnId' = $1 group by state order by state",
    [turnId],
  );
  t.same(
    jobs.rows,
    [
      { state: "cancelled", n: 1 },
      { state: "completed", n: 1 },
    ],
    "the dead worker's job was closed and its replacement completed; none left to run",
  );
  // The inference process forms the turn's memory and then moves the mood (a pg-boss job, two
  // transactions), once, after the retry. Wait for the second write, then count both.
  const counts = async () =>
    (
      await pool.query(
        "select (select count(*)::int from memories where source_kind = 'turn' and source_id = $1) as memories, (select count(*)::int from emotion_log where source_id = $1) as moods",
        [turnId],
      )
    ).rows[0] as { memories: number; moods: number };
  await until("the turn's mood change", async () => ((await counts()).moods > 0 ? true : undefined), 20_000).catch(() => undefined);
  const formed = await counts();
  t.equal(formed.memories, 1, "one episodic memory of the finished turn");
  t.equal(formed.moods, 1, "and one mood change");

  // A Responses API stream is the same turn underneath: it survives the worker's death too.
  const rres = await fetch(`${url}/v1/responses`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", input: "and again", max_output_tokens: 2000, stream: true, seed: 5 }),
  });
  const responseTurn = rres.headers.get("x-psyche-turn")!;
  const rreader = rres.body!.getReader();
  let revents = "";
  while (!revents.includes("response.output_text.delta")) {
    const { value, done } = await rreader.read();
    if (done) break;
    revents += decoder.decode(value, { stream: true });
  }
  inference.child.kill("SIGKILL");
  t.equal(await inference.exited, "SIGKILL");
  inference = await startCli(["inference"], env, /inference worker \S+ running/);
  procs.push(inference);
  for (;;) {
    const { value, done } = await rreader.read();
    if (done) break;
    revents += decoder.decode(value, { stream: true });
  }
  const parsed = revents
    .split("\n\n")
    .map((b) => /^data: (\{.*\})$/m.exec(b)?.[1])
    .filter((d): d is string => d !== undefined)
    .map((d) => JSON.parse(d));
  t.same(
    parsed.map((e) => e.sequence_number),
    parsed.map((_, i) => i),
    "one numbered sequence across the crash",
  );
  t.match(parsed.at(-1).type, /^response\.(completed|incomplete)$/);
  const rturn = (await pool.query("select status, attempts, content from turns where id = $1", [responseTurn])).rows[0];
  t.match(rturn, { status: "done", attempts: 2 });
  t.equal(
    parsed
      .filter((e) => e.type === "response.output_text.delta")
      .map((e) => e.delta)
      .join(""),
    rturn.content,
    "the client's deltas are the stored reply",
  );
  t.equal(parsed.at(-1).response.output[0].content[0].text, rturn.content);

  // SIGTERM: every process stops taking work, settles, exits 0.
  web.child.kill("SIGTERM");
  inference.child.kill("SIGTERM");
  t.equal(await web.exited, 0, "web exits 0 on SIGTERM");
  t.equal(await inference.exited, 0, "inference exits 0 on SIGTERM");
});

t.test("the worker dies with three chats in its batch: each resumes once, and each client gets its whole reply", async (t) => {
  const web = await startCli(["web", "--port", "0"], env, /listening on (http:\/\/\S+)/);
  procs.push(web);
  const url = web.match[1]!;
  let inference = await startCli(["inference", "--parallel", "3"], env, /inference worker \S+ running/);
  procs.push(inference);
  const decoder = new TextDecoder();
  const streams = await Promise.all(
    [1, 2, 3].map(async (i) => {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "psyche",
          messages: [{ role: "user", content: `story ${i}` }],
          max_tokens: 1500,
          stream: true,
          seed: i,
        }),
      });
      t.equal(res.status, 200);
      return { turnId: res.headers.get("x-psyche-turn")!, reader: res.body!.getReader(), sse: "" };
    }),
  );
  // All three flowing at once, then the worker is killed.
  await Promise.all(
    streams.map(async (s) => {
      while (!/"content":"[^"]/.test(s.sse)) {
        const { value, done } = await s.reader.read();
        if (done) break;
        s.sse += decoder.decode(value, { stream: true });
      }
    }),
  );
  const running = await pool.query("select count(*)::int as n from turns where id = any($1) and status = 'running'", [
    streams.map((s) => s.turnId),
  ]);
  t.equal(running.rows[0].n, 3, "all three were generating together");
  inference.child.kill("SIGKILL");
  t.equal(await inference.exited, "SIGKILL");
  inference = await startCli(["inference", "--parallel", "3"], env, /inference worker \S+ running/);
  procs.push(inference);
  for (const s of streams) {
    for (;;) {
      const { value, done } = await s.reader.read();
      if (done) break;
      s.sse += decoder.decode(value, { stream: true });
    }
    t.match(s.sse, /data: \[DONE\]\n\n$/, "the stream went on to the end");
    const content = s.sse
      .split("\n\n")
      .map((b) => /^data: (\{.*\})$/m.exec(b)?.[1])
      .filter((d): d is string => d !== undefined)
      .map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? "")
      .join("");
    const turn = (await pool.query("select status, attempts, content from turns where id = $1", [s.turnId])).rows[0];
    t.match(turn, { status: "done", attempts: 2 }, "resumed once, by the new worker");
    t.equal(content, turn.content, "what the client received is the stored reply");
    const replies = await pool.query("select count(*)::int as n from messages where turn_id = $1 and role = 'assistant'", [s.turnId]);
    t.equal(replies.rows[0].n, 1, "one reply stored");
  }
  web.child.kill("SIGTERM");
  inference.child.kill("SIGTERM");
  t.equal(await web.exited, 0);
  t.equal(await inference.exited, 0);
});

t.test("a chat sent to the web process wakes a dream in the inference process within 1 s", async (t) => {
  // Separate processes on the embedded database: LISTEN/NOTIFY does not cross its socket, so
  // only the reverie's poll (--poll-ms 100 here) can see the waiting chat. On a real
  // PostgreSQL the web process's signal reaches it too.
  const web = await startCli(["web", "--port", "0"], env, /listening on (http:\/\/\S+)/);
  procs.push(web);
  const url = web.match[1]!;
  const inference = await startCli(["inference"], env, /inference worker \S+ running/);
  procs.push(inference);
  // The tiny model reads a 4,000-token dream in about 5 s here, so on a loaded machine it can
  // end on its own before the chat is even accepted: that dream proves nothing, and another is
  // queued (three tries). One that ends after the chat was accepted must have been woken by it.
  let woke: { status: string; wake_latency_ms: number; ended_early: boolean } | undefined;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const queued = await fetch(`${url}/dream/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "dream", max_tokens: 4000 }),
    });
    t.equal(queued.status, 202);
    const dream = await until(
      "the dream to be generating",
      async () => (await pool.query("select id from dream_journal where kind = 'dream' and status = 'dreaming' and tokens = 0")).rows[0],
      30_000,
    );
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: `wake up (${attempt})` }], max_tokens: 4 }),
    });
    t.equal(chat.status, 200);
    await chat.text();
    // The journal's end is written as the model stops; on a loaded machine the worker may have
    // gone on without it (dreams/reverie-job.ts, WAKE_DEADLINE_MS), so it is waited for here.
    woke = await until(
      "the dream's end to be written",
      async () =>
        (
          await pool.query(
            `select status, wake_latency_ms,
                    ended_at < (select max(created_at) from turns) as ended_early
               from dream_journal where id = $1 and status <> 'dreaming'`,
            [dream.id],
          )
        ).rows[0],
      30_000,
    );
    if (!(woke!.status === "done" && woke!.ended_early)) break;
    t.comment(`try ${attempt}: the dream ended on its own before the chat was accepted; queueing another`);
  }
  t.equal(woke!.status, "paused", `the chat woke the dream (it ended ${JSON.stringify(woke)})`);
  t.ok(
    woke!.wake_latency_ms < 1000,
    `its model stopped ${Math.round(woke!.wake_latency_ms)} ms after the chat was accepted (the promise: under 1 s)`,
  );
  web.child.kill("SIGTERM");
  inference.child.kill("SIGTERM");
  t.equal(await web.exited, 0);
  t.equal(await inference.exited, 0);
});

t.test("the embedded database exits 0 on SIGTERM and frees its port", { skip: EMBEDDED_ONLY }, async (t) => {
  await pool.end();
  db!.child.kill("SIGTERM");
  t.equal(await db!.exited, 0);
});

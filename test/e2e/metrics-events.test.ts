/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// The window into the inner life: GET /metrics parses as Prometheus text and moves when a chat
// runs and a dream is woken; GET /v1/events streams the dream's start, its wake and the rest,
// and a client that reconnects with Last-Event-ID misses nothing.
import t from "tap";
import OpenAI from "openai";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });

async function scrape() {
  const res = await fetch(`${psyche.url}/metrics`);
  t.match(res.headers.get("content-type"), /^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(await res.text());
  const byName = new Map(families.map((f) => [f.name, f]));
  const value = (name: string, labels: Record<string, string> = {}) => {
    const f = byName.get(name);
    const sample = f?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    return sample === undefined ? undefined : Number(sample.value ?? sample.buckets?.["+Inf"]);
  };
  return { families, byName, value };
}

/** Reads an SSE stream of /v1/events until `enough` says so; returns the events and the stream's last id. */
async function readEvents(headers: Record<string, string>, query: string, enough: (events: any[]) => boolean, ms = 60_000) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  const res = await fetch(`${psyche.url}/v1/events${query}`, { headers, signal: controller.signal });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  const events: any[] = [];
  let buffer = "";
  try {
    while (!enough(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += new TextDecoder().decode(value);
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        const type = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (id && data) events.push({ sseId: id, sseType: type, ...JSON.parse(data) });
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

t.test("/metrics: every named family, in the text format, moving with a chat", async (t) => {
  const before = await scrape();
  for (const [name, type] of [
    ["psyche_http_requests_total", "COUNTER"],
    ["psyche_http_request_duration_seconds", "HISTOGRAM"],
    ["psyche_chat_time_to_first_token_seconds", "HISTOGRAM"],
    ["psyche_chat_tokens_total", "COUNTER"],
    ["psyche_queue_jobs", "GAUGE"],
    ["psyche_dream_wake_latency_seconds", "HISTOGRAM"],
    ["psyche_reveries_total", "COUNTER"],
    ["psyche_memories", "GAUGE"],
    ["psyche_mood_valence", "GAUGE"],
    ["psyche_mood_arousal", "GAUGE"],
    ["psyche_worker_up", "GAUGE"],
    ["psyche_info", "GAUGE"],
    ["process_cpu_seconds_total", "COUNTER"],
    ["nodejs_heap_size_used_bytes", "GAUGE"],
  ] as const) {
    t.equal(before.byName.get(name)?.type, type, `${name} is a ${type.toLowerCase()}`);
  }
  t.equal(before.value("psyche_worker_up"), 1);
  t.equal(before.value("psyche_queue_jobs", { queue: "psyche-inference", state: "active" }), 0);

  await client.chat.completions.create({
    model: "psyche",
    messages: [{ role: "user", content: "What a wonderful, happy day!" }],
    max_tokens: 8,
  });
  await client.chat.completions
    .create({ model: "psyche", messages: [{ role: "user", content: "Stream this" }], max_tokens: 8, stream: true })
    .then(async (s) => {
      for await (const _ of s);
    });
  await until("the turn's memory", async () =>
    (await psyche.db.pool.query("select 1 from memories where source_kind = 'turn'")).rowCount! >= 2 ? true : undefined,
  );
  const after = await scrape();
  const written = (await psyche.db.pool.query("select sum(completion_tokens)::int as n from turns")).rows[0].n;
  t.ok(written > 0);
  t.equal(
    after.value("psyche_chat_tokens_total", { kind: "completion" })! -
      (before.value("psyche_chat_tokens_total", { kind: "completion" }) ?? 0),
    written,
    "the turns' completion tokens",
  );
  t.ok(after.value("psyche_chat_tokens_total", { kind: "prompt" })! > 0);
  t.equal(after.value("psyche_chat_time_to_first_token_seconds"), 2, "two first tokens timed");
  t.ok(after.value("psyche_http_requests_total", { route: "/v1/chat/completions", method: "POST", status: "200" })! >= 2);
  t.match(
    after.byName.get("psyche_http_requests_total")!.metrics[0]!.labels!.process,
    /^.+:\d+$/,
    "per-process counters name their process",
  );
  t.ok(after.value("psyche_memories", { kind: "episodic" })! >= 2, "the turns' memories are counted");
  t.equal(after.value("psyche_queue_jobs", { queue: "psyche-inference", state: "completed" }), 2);
});

t.test("/v1/events: a dream starts and a chat wakes it; a reconnect with Last-Event-ID misses nothing", async (t) => {
  const first = await fetch(`${psyche.url}/dream/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "dream", max_tokens: 3000 }),
  });
  t.equal(first.status, 202);
  // Listen from the start of the log: the dream may have begun already.
  const started = await readEvents({}, "?after=0&types=dream.state", (es) => es.some((e) => e.data.state === "dreaming"));
  const dreaming = started.find((e) => e.data.state === "dreaming");
  t.match(dreaming, { type: "dream.state", sseType: "dream.state", data: { state: "dreaming", kind: "dream", journal_id: String } });
  t.equal(dreaming.sseId, dreaming.id, "the SSE id is the event's id");

  // Disconnected now; the chat comes while no one listens.
  const resumeFrom = started.at(-1).sseId;
  await client.chat.completions.create({ model: "psyche", messages: [{ role: "user", content: "wake up" }], max_tokens: 4 });
  const rest = await readEvents(
    { "Last-Event-ID": resumeFrom },
    "",
    (es) => es.some((e) => e.type === "dream.state" && e.data.state === "awake") || es.some((e) => e.data.state === "sleeping"),
  );
  t.ok(
    rest.every((e) => BigInt(e.id) > BigInt(resumeFrom)),
    "only events after the one seen",
  );
  const ids = rest.map((e) => BigInt(e.id));
  t.same(
    ids,
    [...ids].sort((a, b) => (a < b ? -1 : 1)),
    "in order",
  );
  const states = rest.filter((e) => e.type === "dream.state" && e.data.journal_id === dreaming.data.journal_id).map((e) => e.data.state);
  if (states.includes("sleeping")) {
    t.comment("the random model ended its dream before the chat came; the wake is not tested this run");
  } else {
    t.same(states, ["waking", "awake"], "the dream's wake, in order");
    const awake = rest.find((e) => e.data.state === "awake");
    t.match(awake.data, { status: "paused", was_interrupted: true, wake_latency_ms: Number });
  }

  // Nothing was missed: what the two connections saw is the log itself.
  const log = await psyche.db.pool.query("select e.id::text from events e where e.id > $1 and e.id <= $2 order by e.id", [
    resumeFrom,
    rest.at(-1).id,
  ]);
  t.same(
    rest.map((e) => e.id),
    log.rows.map((r) => r.id),
    "every event in the log, none twice",
  );

  // A dream that ended is scored; a woken one is paused, to be scored once a later dream ends it.
  if (states.includes("sleeping")) {
    const scored = await until(
      "the reverie's score",
      async () =>
        (
          await psyche.db.pool.query("select 1 from events where type = 'reverie.finished' and data->>'journal_id' = $1", [
            dreaming.data.journal_id,
          ])
        ).rows[0],
    );
    t.ok(scored);
  }
  const metrics = await scrape();
  t.ok(metrics.value("psyche_reveries_total", { kind: "dream", status: states.includes("sleeping") ? "done" : "paused" })! >= 1);
  if (!states.includes("sleeping")) t.equal(metrics.value("psyche_dream_wake_latency_seconds"), 1, "the wake is in the latency histogram");
});

t.test("memories and the mood: stored, folded and moved, each an event", async (t) => {
  const from = (await psyche.db.pool.query("select coalesce(max(id), 0)::text as id from events")).rows[0].id;
  const res = await fetch(`${psyche.url}/v1/memories`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "The lighthouse keeper paints every spring", importance: 0.7 }),
  });
  t.equal(res.status, 201);
  const memory = (await res.json()) as any;
  await psyche.mem.mood.react({ valence: 0.8, arousal: 0.3 }, "api", null);
  await psyche.db.pool.query(
    "update memories set merged_into = $1 where id = (select id from memories where id <> $1 and deleted_at is null order by created_at limit 1)",
    [memory.id],
  );
  const events = await readEvents({}, `?after=${from}`, (es) => es.some((e) => e.type === "memory.folded"));
  // The earlier chat's own memory may be stored meanwhile: this one is found by its id.
  t.match(
    events.find((e) => e.type === "memory.stored" && e.data.id === memory.id),
    {
      data: { id: memory.id, kind: "semantic", importance: 0.7, source_kind: "api", excerpt: "The lighthouse keeper paints every spring" },
    },
  );
  t.match(
    events.find((e) => e.type === "mood.changed" && e.data.cause === "api"),
    { data: { valence: Number, arousal: Number } },
  );
  t.match(
    events.find((e) => e.type === "memory.folded"),
    { data: { into: memory.id } },
  );
});

t.test("a client that comes after a minute of quiet is an event", async (t) => {
  // A process writes presence at most once a second (http/presence.ts): past the last test's.
  await new Promise((r) => setTimeout(r, 1100));
  await psyche.db.pool.query("update activity set last_request_at = now() - interval '5 minutes'");
  const from = (await psyche.db.pool.query("select coalesce(max(id), 0)::text as id from events")).rows[0].id;
  await fetch(`${psyche.url}/v1/models`);
  const events = await readEvents({}, `?after=${from}&types=client.came`, (es) => es.length >= 1, 10_000);
  t.equal(events.length, 1);
  t.ok(events[0].data.quiet_seconds >= 299, `quiet for ${events[0].data.quiet_seconds} s`);
  await fetch(`${psyche.url}/v1/models`);
  const again = await psyche.db.pool.query("select count(*)::int as n from events where id > $1 and type = 'client.came'", [from]);
  t.equal(again.rows[0].n, 1, "a request right after is no new coming");
});

t.test("the clients leaving is an event too, once per quiet spell", async (t) => {
  await psyche.db.pool.query("update activity set last_request_at = now() - interval '2 minutes'");
  const quietSince = (await psyche.db.pool.query("select last_request_at from activity")).rows[0].last_request_at;
  const left = await until(
    "client.left",
    async () =>
      (
        await psyche.db.pool.query(
          "select e.id, e.data from events e where e.type = 'client.left' and e.at >= $1 order by e.id desc limit 1",
          [quietSince],
        )
      ).rows[0],
    10_000,
  );
  t.type(left.data.last_request_at, "string");
  // Ticks go on; the same quiet spell is not recorded again.
  await new Promise((r) => setTimeout(r, 1500));
  const again = (
    await psyche.db.pool.query("select count(*)::int as n from events e where e.type = 'client.left' and e.id > $1", [left.id])
  ).rows[0].n;
  t.equal(again, 0);
});

t.test("a backlog, a type filter, and bad queries", async (t) => {
  const backlog = await readEvents({}, "?backlog=3", (es) => es.length >= 3, 5_000);
  t.equal(backlog.length, 3, "the last 3 events");
  const last = (await psyche.db.pool.query("select max(id)::text as id from events")).rows[0].id;
  t.equal(backlog.at(-1).id, last);
  for (const [query, param] of [
    ["?types=dream.nope", "types[0]"],
    ["?after=-1", "after"],
    ["?backlog=5000", "backlog"],
  ] as const) {
    const res = await fetch(`${psyche.url}/v1/events${query}`);
    t.equal(res.status, 400, query);
    t.equal(((await res.json()) as any).error.param, param);
  }
});

t.test("watching does not keep Psyche awake: /v1/events and /metrics are not presence", async (t) => {
  const before = (await psyche.db.pool.query("select last_request_at from activity")).rows[0].last_request_at;
  await readEvents({}, "?backlog=1", (es) => es.length >= 1, 5_000);
  await fetch(`${psyche.url}/metrics`);
  const after = (await psyche.db.pool.query("select last_request_at from activity")).rows[0].last_request_at;
  t.same(after, before);
});

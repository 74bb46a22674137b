/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Presence of connected clients (POST /v1/presence): while one heartbeats Psyche does not
// dream, however long it is quiet; it dreams the dream delay after the last one leaves; a
// client that arrives wakes a running dream at once; /health and /dream/status list them.
import t from "tap";
import { randomUUID } from "node:crypto";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const psyche = await startPsyche(t, {
  dreamDelaySeconds: 2,
  wakeLockSeconds: 0,
  recallPromptTokens: 0,
  dreamMaxTokens: 8,
  presenceTtlSeconds: 6,
});
// A TTL of six seconds asks for a heartbeat every two: a loaded machine may delay one by a
// second or more, and that must not read as leaving.
const pool = psyche.db.pool;
const json = { "content-type": "application/json" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dreams = async () => (await pool.query("select count(*)::int as n from dream_journal where kind = 'dream'")).rows[0].n as number;
const beat = async (id: string, name = "hermes") => {
  const res = await fetch(`${psyche.url}/v1/presence`, { method: "POST", headers: json, body: JSON.stringify({ client_id: id, name }) });
  return { status: res.status, body: (await res.json()) as any };
};

t.test("bad heartbeats and goodbyes: OpenAI's error shape, nothing recorded", async (t) => {
  const bad = await beat("not-a-uuid");
  t.equal(bad.status, 400);
  t.match(bad.body.error, { type: "invalid_request_error", param: "client_id", message: /UUID/ });
  const extra = await fetch(`${psyche.url}/v1/presence`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ client_id: randomUUID(), workspace: "/home" }),
  });
  t.equal(extra.status, 400);
  const gone = await fetch(`${psyche.url}/v1/presence/${randomUUID()}`, { method: "DELETE" });
  t.equal(gone.status, 404);
  t.match(((await gone.json()) as any).error, { code: "client_not_found" });
  t.equal((await pool.query("select count(*)::int as n from clients")).rows[0].n, 0);
});

t.test("a client present holds dreams off; after it leaves, Psyche dreams after the delay", async (t) => {
  await fetch(`${psyche.url}/dream/config`, {
    method: "PATCH",
    headers: json,
    body: JSON.stringify({ idle_thoughts: false, reflection_threshold: 0 }),
  });
  const id = randomUUID();
  const first = await beat(id);
  t.match(first.body, { object: "presence", client_id: id, arrived: true, present: 1, heartbeat_seconds: 2 });
  t.equal((await beat(id)).body.arrived, false, "a second heartbeat is no arrival");
  const health = (await (await fetch(`${psyche.url}/health`)).json()) as any;
  t.match(health.clients, { present: 1, data: [{ id, name: "hermes" }] }, "/health lists it");
  const status = (await (await fetch(`${psyche.url}/dream/status`)).json()) as any;
  t.match(status.clients, [{ id, name: "hermes" }], "/dream/status lists it");

  // Heartbeats once a second, no other request, for three dream delays.
  const end = Date.now() + 6000;
  while (Date.now() < end) {
    await sleep(900);
    t.equal((await beat(id)).status, 200);
  }
  t.equal(await dreams(), 0, "six seconds with a client here and a two-second dream delay: no dream");

  const left = await fetch(`${psyche.url}/v1/presence/${id}`, { method: "DELETE" });
  t.match(await left.json(), { left: true, present: 0 });
  const leftAt = Date.now();
  await until("a dream after the client left", async () => ((await dreams()) > 0 ? true : undefined), 20_000);
  t.ok(Date.now() - leftAt >= 1500, `it waited the delay (${Date.now() - leftAt} ms)`);
});

t.test("the dream state is about presence: awake while a client is here and quiet, a late heartbeat included", async (t) => {
  const state = async () => ((await (await fetch(`${psyche.url}/dream/status`)).json()) as any).state as string;
  await until("no reverie running", async () => ((await state()) === "dreaming" ? undefined : true), 20_000);
  const id = randomUUID();
  await beat(id);
  await sleep(200);
  // Quiet for an hour, but for the client: no request, no turn (this file chats with no one).
  const quiet = () => pool.query("update activity set last_request_at = now() - interval '1 hour'");
  await quiet();
  t.equal(await state(), "awake", "a client present and idle: awake");
  // One heartbeat late (a loaded machine): the client beats every two seconds, the TTL is six.
  await pool.query("update clients set last_seen_at = now() - interval '4 seconds' where id = $1", [id]);
  t.equal(await state(), "awake", "one late heartbeat is not leaving");
  await pool.query("update clients set last_seen_at = now() - interval '7 seconds' where id = $1", [id]);
  t.equal(await state(), "sleeping", "three missed heartbeats in a row: gone");
  await beat(id);
  await sleep(200);
  await quiet();
  t.equal(await state(), "awake", "back");
  await fetch(`${psyche.url}/v1/presence/${id}`, { method: "DELETE" });
  await sleep(200);
  await quiet();
  t.equal(await state(), "sleeping", "after it left, and no one asked anything for a minute: sleeping");
});

t.test("a client that stops heartbeating is gone after the TTL", async (t) => {
  const id = randomUUID();
  await beat(id, "crashed");
  t.equal((await pool.query("select count(*)::int as n from clients where id = $1 and left_at is null", [id])).rows[0].n, 1);
  await until(
    "the silent client to be gone",
    async () => {
      const h = (await (await fetch(`${psyche.url}/health`)).json()) as any;
      return h.clients.data.some((c: any) => c.id === id) ? undefined : true;
    },
    20_000,
  );
  t.equal((await beat(id, "crashed")).body.arrived, true, "its next heartbeat is an arrival again");
  await fetch(`${psyche.url}/v1/presence/${id}`, { method: "DELETE" });
});

t.test("a client that arrives wakes a running dream at once", async (t) => {
  // The random model now and then ends a dream itself: one that ended first is tried again.
  for (let trial = 1; trial <= 4; trial++) {
    const queued = (await (
      await fetch(`${psyche.url}/dream/jobs`, { method: "POST", headers: json, body: JSON.stringify({ kind: "dream", max_tokens: 3000 }) })
    ).json()) as any;
    const jobId = queued.data[0].id;
    const row = async () => (await pool.query("select * from dream_journal where job_id = $1", [jobId])).rows[0];
    await until("the dream to start", async () => ((await row())?.status === "dreaming" ? true : undefined));
    await sleep(300);
    const id = randomUUID();
    const arrival = await beat(id);
    const ended = await until("the dream to end", async () => {
      const r = await row();
      return r && r.status !== "dreaming" ? r : undefined;
    });
    await fetch(`${psyche.url}/v1/presence/${id}`, { method: "DELETE" });
    if (!arrival.body.woke && ended.status === "done" && trial < 4) continue;
    t.equal(arrival.body.woke, true, "the heartbeat asked it to wake");
    t.match(ended, { status: "paused", was_interrupted: true });
    t.ok(ended.wake_latency_ms < 1000, `woke in ${ended.wake_latency_ms} ms`);
    break;
  }
});

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Chats in slots on the real stack (the tiny model, --parallel 3): chats sent at once stream to
// the end with the text each gets alone; a chat that comes while every slot is busy waits for
// the first slot to free, not for all of them; chats beyond the slots are taken ahead and wait in
// line, where a cancel ends them; a dream yields to chats and waits while they run.
import t from "tap";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

// No memories and a mood that barely moves: a prompt is the same whenever it is sent.
const psyche = await startPsyche(t, { parallel: 3, recallPromptTokens: 0, moodSensitivity: 0.0001, threads: 2 });
const pool = psyche.db.pool;

/**
 * A streamed chat's text, as the client assembles it from the deltas, and its turn. Greedy: a
 * batch of several sequences is multiplied in other kernels than one alone, and the last bits
 * of a logit differ; the tiny random model's near-flat distribution turns that into another
 * sampled token now and then, where the likeliest token stays the same.
 */
async function stream(content: string, seed: number, maxTokens: number): Promise<{ text: string; turnId: string; finish: string }> {
  const res = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "psyche",
      messages: [{ role: "user", content }],
      max_tokens: maxTokens,
      seed,
      stream: true,
      temperature: 0,
    }),
  });
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  const body = await res.text();
  const chunks = body
    .split("\n\n")
    .map((b) => /^data: (\{.*\})$/m.exec(b)?.[1])
    .filter((d): d is string => d !== undefined)
    .map((d) => JSON.parse(d));
  if (!body.endsWith("data: [DONE]\n\n")) throw new Error(`the stream did not end: ${body.slice(-200)}`);
  return {
    text: chunks.map((c) => c.choices?.[0]?.delta?.content ?? "").join(""),
    turnId: res.headers.get("x-psyche-turn")!,
    finish: chunks.findLast((c) => c.choices?.[0]?.finish_reason)?.choices[0].finish_reason,
  };
}

const turn = async (id: string) =>
  (await pool.query("select status, attempts, content, started_at, finished_at from turns where id = $1", [id])).rows[0];

t.test("chats sent at once stream to the end with the text each gets alone", async (t) => {
  const asks = ["the sea at night", "a kiln's firmware", "bread and salt"].map((q, i) => ({ q, seed: i + 11 }));
  const alone = [];
  for (const a of asks) alone.push(await stream(a.q, a.seed, 20));
  const together = await Promise.all(asks.map((a) => stream(a.q, a.seed, 20)));
  t.same(
    together.map((r) => r.text),
    alone.map((r) => r.text),
  );
  for (const r of together) t.match(await turn(r.turnId), { status: "done", attempts: 1, content: r.text });
  // They ran together: each started before any of the others finished.
  const rows = await Promise.all(together.map((r) => turn(r.turnId)));
  const lastStart = Math.max(...rows.map((r) => r.started_at.getTime()));
  const firstEnd = Math.min(...rows.map((r) => r.finished_at.getTime()));
  t.ok(lastStart < firstEnd, "all three were generating at the same time");
});

t.test("with every slot busy, a chat waits for the first free slot, not for all", async (t) => {
  const long = [1, 2].map((i) => stream(`a long story ${i}`, 30 + i, 200));
  const short = stream("a short one", 33, 6);
  // All three slots taken, then one more.
  await until("three chats running", async () => {
    const n = (await pool.query("select count(*)::int as n from turns where status = 'running'")).rows[0].n;
    return n >= 3 || undefined;
  });
  const late = stream("one more", 34, 6);
  const lateDone = await late;
  const longRows = await Promise.all((await Promise.all(long)).map((r) => turn(r.turnId)));
  const lateRow = await turn(lateDone.turnId);
  t.equal((await short).finish, "length");
  t.ok(
    longRows.every((r) => r.finished_at > lateRow.finished_at),
    "the late chat finished while the long ones still ran",
  );
  t.ok(
    longRows.every((r) => r.finished_at > lateRow.started_at),
    "it started before the long ones ended",
  );
});

t.test("chats beyond the slots are taken ahead and wait in line; one cancelled there ends at once", async (t) => {
  // Greedy, and long enough that the slots stay busy while the rest is checked.
  const long = [1, 2, 3].map((i) => stream(`a very long story ${i}`, 50 + i, 1500));
  await until("three chats running", async () => {
    const n = (await pool.query("select count(*)::int as n from turns where status = 'running'")).rows[0].n;
    return n >= 3 || undefined;
  });
  const start = (content: string) =>
    fetch(`${psyche.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content }], max_tokens: 6, stream: true }),
    });
  const waiting = await start("waits for a slot");
  const cancelled = await start("cancelled in line");
  const ids = [waiting, cancelled].map((r) => r.headers.get("x-psyche-turn")!);
  // Taken ahead of the slots (workers/inference-worker.ts): claimed, their memories recalled, in line.
  await until("five chats taken", async () => {
    const n = (await pool.query("select count(*)::int as n from turns where status = 'running'")).rows[0].n;
    return n >= 5 || undefined;
  });
  const res = await fetch(`${psyche.url}/v1/turns/${ids[1]}/cancel`, { method: "POST" });
  t.equal(res.status, 200);
  await cancelled.text();
  const cancelledRow = await turn(ids[1]!);
  t.match(cancelledRow, { status: "cancelled", content: "" });
  await waiting.text();
  const waitingRow = await turn(ids[0]!);
  t.match(waitingRow, { status: "done" });
  t.ok(waitingRow.content.length > 0, "the one still in line was answered");
  const longRows = await Promise.all((await Promise.all(long)).map((r) => turn(r.turnId)));
  t.ok(
    longRows.every((r) => r.finished_at > cancelledRow.finished_at),
    "the cancelled one ended while every slot still generated, not when one freed",
  );
});

t.test("a dream yields to chats, and does not start while they run", async (t) => {
  const post = async (body: unknown) =>
    (await (
      await fetch(`${psyche.url}/dream/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json()) as any;
  const journal = async (jobId: string) => (await pool.query("select * from dream_journal where job_id = $1", [jobId])).rows[0];
  const dream = (await post({ kind: "dream", max_tokens: 3000 })).data[0].id;
  await until("the dream to start", async () => (await journal(dream))?.status === "dreaming" || undefined);
  const chats = [1, 2, 3].map((i) => stream(`wake ${i}`, 40 + i, 60));
  const row = await until("the dream to stop", async () => {
    const r = await journal(dream);
    return r && r.status !== "dreaming" ? r : undefined;
  });
  t.match(row, { status: "paused", was_interrupted: true });
  // A dream queued while the chats run waits for them (a focus of its own: one without would
  // continue the paused one, src/dreams/dream.ts).
  const second = (await post({ kind: "dream", max_tokens: 8, focus: "the sea" })).data[0].id;
  const ended = await Promise.all(chats);
  const lastChatEnd = Math.max(...(await Promise.all(ended.map((c) => turn(c.turnId)))).map((r) => r.finished_at.getTime()));
  const secondRow = await until("the second dream", async () => {
    const r = await journal(second);
    return r && r.status !== "dreaming" ? r : undefined;
  });
  t.ok(secondRow.started_at.getTime() >= lastChatEnd, "the second dream began after the last chat ended");
});

t.test("usage says how much of the prompt a slot already held", async (t) => {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) =>
    (await (
      await fetch(`${psyche.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      })
    ).json()) as any;
  const system = "You are a coding agent. Read files before you edit them, and run the tests after. ".repeat(20);
  const first = [
    { role: "system", content: system },
    { role: "user", content: "list the files" },
  ];
  const a = await post("/v1/chat/completions", { model: "psyche", messages: first, max_tokens: 4, temperature: 0 });
  const again = [...first, { role: "assistant", content: a.choices[0].message.content }, { role: "user", content: "now read one" }];
  const b = await post("/v1/chat/completions", { model: "psyche", messages: again, max_tokens: 4, temperature: 0 });
  t.ok(
    b.usage.prompt_tokens_details.cached_tokens > a.usage.prompt_tokens / 2,
    "the system prompt and the first exchange were not read again",
  );
  t.ok(b.usage.prompt_tokens_details.cached_tokens < b.usage.prompt_tokens);
  // The same through Anthropic's API: the cached part is cache_read_input_tokens.
  const m = await post("/v1/messages", {
    model: "psyche",
    system,
    max_tokens: 4,
    temperature: 0,
    messages: [
      { role: "user", content: "list the files" },
      { role: "assistant", content: a.choices[0].message.content || "." },
      { role: "user", content: "and the tests?" },
    ],
  });
  t.ok(m.usage.cache_read_input_tokens > a.usage.prompt_tokens / 2, "the system prompt was read from the slot");
  t.ok(m.usage.input_tokens > 0 && m.usage.input_tokens < m.usage.cache_read_input_tokens, "only the new part was read");
  t.equal(m.usage.cache_creation_input_tokens, 0);
});

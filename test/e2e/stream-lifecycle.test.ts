/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// What happens to a stream when its client goes away, resumes, or cancels (docs/api.md, "Streams").
import t from "tap";
import OpenAI from "openai";
import { startPsyche } from "../helpers/psyche.js";

// A context that holds the long prompt below: it is refused up front otherwise (conversation/context-fit.ts).
const psyche = await startPsyche(t, { maxTokens: 4000, contextSize: 32768 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const waitFor = async (check: () => Promise<boolean>, ms = 20_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};
const turnStatus = async (id: string) =>
  (await psyche.db.pool.query("select status, content, completion_tokens, error from turns where id = $1", [id])).rows[0];

/** Reads an SSE response body into its data payloads. */
async function readSse(res: Response): Promise<{ ids: number[]; data: string[] }> {
  const text = await res.text();
  const ids: number[] = [];
  const data: string[] = [];
  for (const block of text.split("\n\n")) {
    const id = /^id: (\d+)$/m.exec(block);
    if (id) ids.push(Number(id[1]));
    const d = /^data: (.*)$/m.exec(block);
    if (d) data.push(d[1]!);
  }
  return { ids, data };
}
const contentOf = (data: string[]) =>
  data
    .filter((d) => d !== "[DONE]")
    .map((d) => JSON.parse(d).choices?.[0]?.delta?.content ?? "")
    .join("");

t.test("a client that disconnects mid-stream: the turn finishes and is stored whole; the stream resumes", async (t) => {
  const ac = new AbortController();
  const res = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "psyche",
      messages: [{ role: "user", content: "a long story" }],
      max_tokens: 1500,
      stream: true,
      seed: 9,
    }),
    signal: ac.signal,
  });
  t.equal(res.status, 200);
  const turnId = res.headers.get("x-psyche-turn")!;
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.ok(first.value && first.value.length > 0, "received the start of the stream");
  ac.abort();
  t.ok(await waitFor(async () => (await turnStatus(turnId))?.status === "done"), "generation went on to the end");
  const turn = await turnStatus(turnId);
  t.equal(turn.completion_tokens, 1500, "all tokens generated");

  // Resume from the beginning, from any web process: the whole reply, then [DONE].
  const whole = await readSse(await fetch(`${psyche.url}/v1/turns/${turnId}/events`));
  t.equal(whole.data.at(-1), "[DONE]");
  t.equal(contentOf(whole.data), turn.content, "the resumed stream carries the stored reply");
  // Resume after an event id: exactly the rest.
  const cut = whole.ids[Math.floor(whole.ids.length / 2)]!;
  const rest = await readSse(await fetch(`${psyche.url}/v1/turns/${turnId}/events`, { headers: { "Last-Event-ID": String(cut) } }));
  t.ok(
    rest.ids.every((id) => id > cut),
    "only events after Last-Event-ID",
  );
  const head = await readSse(await fetch(`${psyche.url}/v1/turns/${turnId}/events`));
  const before = contentOf(head.data.slice(0, 1 + head.ids.indexOf(cut) + 1));
  t.equal(before + contentOf(rest.data), turn.content, "before + rest = the whole reply, nothing twice");
});

t.test("cancelling a turn stops generation and keeps what was said", async (t) => {
  const stream = await client.chat.completions
    .create({ model: "psyche", messages: [{ role: "user", content: "go on forever" }], max_tokens: 4000, stream: true })
    .withResponse();
  const turnId = stream.response.headers.get("x-psyche-turn")!;
  let text = "";
  let finish: string | null | undefined;
  let cancelled = false;
  for await (const chunk of stream.data) {
    text += chunk.choices[0]?.delta.content ?? "";
    finish ??= chunk.choices[0]?.finish_reason;
    if (!cancelled && text.length > 0) {
      cancelled = true;
      const res = await fetch(`${psyche.url}/v1/turns/${turnId}/cancel`, { method: "POST" });
      t.equal(res.status, 200);
    }
  }
  t.equal(finish, "stop", "the stream ends normally");
  const turn = await turnStatus(turnId);
  t.equal(turn.status, "cancelled");
  t.ok(turn.completion_tokens < 4000, `stopped early (${turn.completion_tokens} tokens)`);
  t.equal(turn.content, text, "the stored reply is what the client saw");
  const info = (await (await fetch(`${psyche.url}/v1/turns/${turnId}`)).json()) as any;
  t.equal(info.status, "cancelled");
});

t.test("a turn cancelled before its first token (while the model reads a long prompt) ends cancelled, not failed", async (t) => {
  const long = Array.from({ length: 600 }, (_, i) => `line ${i} of a long letter about the garden`).join("\n");
  const stream = await client.chat.completions
    .create({ model: "psyche", messages: [{ role: "user", content: long }], max_tokens: 50, stream: true })
    .withResponse();
  const turnId = stream.response.headers.get("x-psyche-turn")!;
  for (let i = 0; i < 500 && (await turnStatus(turnId)).status === "queued"; i++) await new Promise((r) => setTimeout(r, 5));
  await fetch(`${psyche.url}/v1/turns/${turnId}/cancel`, { method: "POST" });
  let finish: string | null | undefined;
  for await (const chunk of stream.data) finish ??= chunk.choices[0]?.finish_reason;
  t.equal(finish, "stop", "its stream ends normally");
  const ended = await turnStatus(turnId);
  t.comment(JSON.stringify(ended));
  t.match(ended, { status: "cancelled", error: null });
});

t.test("turn endpoints reject bad ids", async (t) => {
  t.equal((await fetch(`${psyche.url}/v1/turns/not-a-uuid`)).status, 400);
  const missing = await fetch(`${psyche.url}/v1/turns/00000000-0000-4000-8000-000000000000/cancel`, { method: "POST" });
  t.equal(missing.status, 404);
  t.equal(((await missing.json()) as any).error.code, "turn_not_found");
  const res = await fetch(`${psyche.url}/v1/turns/00000000-0000-4000-8000-000000000000/events?after=-3`);
  t.equal(res.status, 400);
});

t.test("a relay that fails ends the stream with an error event, not silently", async (t) => {
  // A queued turn that no job will run: its relay waits, polling turn_events.
  const turnId = "00000000-0000-4000-8000-00000000abcd";
  await psyche.db.pool.query("insert into conversations (id) values ('relay-fail') on conflict do nothing");
  await psyche.db.pool.query("insert into turns (id, conversation_id, model, max_tokens) values ($1, 'relay-fail', 'psyche', 5)", [turnId]);
  const res = await fetch(`${psyche.url}/v1/turns/${turnId}/events`);
  t.equal(res.status, 200);
  const body = res.text();
  await new Promise((r) => setTimeout(r, 300));
  await psyche.db.pool.query("alter table turn_events rename to turn_events_away");
  try {
    const text = await body;
    t.match(text, /"code":"relay_failed"/, "the client is told the relay failed");
    t.match(text, new RegExp(`/v1/turns/${turnId}/events`), "and how to resume");
    t.notMatch(text, /\[DONE\]/);
  } finally {
    await psyche.db.pool.query("alter table turn_events_away rename to turn_events");
  }
});

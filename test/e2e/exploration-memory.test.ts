/* eslint-disable @typescript-eslint/no-explicit-any -- rows of raw queries */
// A client's unattended exploration (X-Psyche-Purpose: exploration, as Hermes sends it while the
// user is away) adds what it found to memory, not its synthetic prompt, and a client that
// explores every few seconds adds one memory per conversation in the exploration window, not one
// per tick. A chat is kept as before. A bad purpose is a 400 that writes nothing.
import t from "tap";
import { startPsyche, writtenRows } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";
import { EXPLORATION_TAG } from "../../src/memory/turn-memory.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const pool = psyche.db.pool;
const PROMPT = '(Hermes: the user has been away for 5 seconds.) You are in the workspace "demo". Look around, then say what you noticed.';
const chat = (conversation: string, content: string, headers: Record<string, string> = {}) =>
  fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "X-Psyche-Conversation": conversation, ...headers },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content }], max_tokens: 16, seed: 1 }),
  });
/** Waits until every memory job of the conversation's turns has run. */
const remembered = (conversation: string, turns: number) =>
  until(
    "the memory jobs",
    async () => {
      const r = await pool.query(
        `select count(*)::int as n from pgboss.job j join turns t on t.id::text = j.data->>'turnId'
       where j.name = 'psyche-memory' and t.conversation_id = $1 and j.state = 'completed'`,
        [conversation],
      );
      return r.rows[0].n >= turns ? true : undefined;
    },
    60_000,
  );

t.test("eight explorations in a row: one memory, of what was found, without the prompt", async (t) => {
  for (let i = 0; i < 8; i++) {
    const res = await chat("hermes-x.idle", PROMPT, { "X-Psyche-Purpose": "exploration" });
    t.equal(res.status, 200);
    await res.json();
  }
  t.same(
    (await pool.query("select distinct purpose from turns where conversation_id = 'hermes-x.idle'")).rows,
    [{ purpose: "exploration" }],
    "the purpose is kept on the turn",
  );
  await remembered("hermes-x.idle", 8);
  const kept = (await pool.query("select content, tags, kind from memories where conversation_id = 'hermes-x.idle' and deleted_at is null"))
    .rows;
  t.equal(kept.length, 1, "one memory for eight ticks");
  t.match(kept[0], { kind: "episodic", tags: [EXPLORATION_TAG], content: /^Exploring on its own while the user was away, Psyche found: / });
  t.equal(
    (await pool.query("select count(*)::int as n from memories where content like '%the user has been away%'")).rows[0].n,
    0,
    "the scaffolding is not remembered",
  );
});

t.test("a chat is remembered as the exchange, as before", async (t) => {
  const res = await chat("hermes-x", "I planted tulips by the gate");
  t.equal(res.status, 200);
  await res.json();
  await remembered("hermes-x", 1);
  t.match((await pool.query("select content, tags from memories where conversation_id = 'hermes-x'")).rows, [
    { content: /^User: I planted tulips by the gate\nPsyche: /, tags: [] },
  ]);
});

t.test("an unknown purpose is refused by name, and nothing is written", async (t) => {
  const before = await writtenRows(psyche);
  const res = await chat("hermes-y", "hello", { "X-Psyche-Purpose": "dreaming" });
  t.equal(res.status, 400);
  t.match(((await res.json()) as any).error, {
    type: "invalid_request_error",
    param: "X-Psyche-Purpose",
    message: /must be one of chat, exploration/,
  });
  t.same(await writtenRows(psyche), before);
});

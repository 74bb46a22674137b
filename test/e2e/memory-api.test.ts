/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// The memory, mood and embeddings API end to end: real HTTP, the openai SDK, embedded
// Postgres, pg-boss jobs, piscina threads and the tiny GGUF model.
import t from "tap";
import OpenAI from "openai";
import { until } from "../helpers/until.js";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { bodyLimit: 50_000 });
const client = new OpenAI({ baseURL: `${psyche.url}/v1`, apiKey: "unused", maxRetries: 0 });
const pool = psyche.db.pool;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${psyche.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

const counts = async () =>
  Object.fromEntries(
    (
      await pool.query<{ t: string; n: number }>(
        `select 'memories' as t, count(*)::int as n from memories
         union all select 'emotion_log', count(*)::int from emotion_log where cause <> 'decay'
         union all select 'jobs', count(*)::int from pgboss.job where name in ('psyche-inference', 'psyche-memory')`,
      )
    ).rows.map((r) => [r.t, r.n]),
  );

t.test("store, read, search, delete", async (t) => {
  const created = await api("POST", "/v1/memories", { content: "Ravi plays the cello in a quartet on Thursdays", tags: ["ravi", "music"] });
  t.equal(created.status, 201);
  t.match(created.body, { object: "memory", kind: "semantic", reinforced: false, tags: ["ravi", "music"], source: { kind: "api" } });
  t.ok(created.body.importance >= 0 && created.body.importance <= 1);
  const id = created.body.id;
  t.equal((await api("GET", `/v1/memories/${id}`)).body.content, "Ravi plays the cello in a quartet on Thursdays");

  const again = await api("POST", "/v1/memories", { content: "Ravi plays the cello in a quartet on Thursdays." });
  t.equal(again.status, 200, "a near-duplicate answers 200 with the existing memory");
  t.match(again.body, { id, reinforced: true, reinforcements: 1 });

  await api("POST", "/v1/memories", { content: "The oven takes twenty minutes to heat up", importance: 0.2, kind: "episodic" });
  const found = await api("GET", `/v1/memories/search?q=${encodeURIComponent("who plays cello?")}&k=2`);
  t.equal(found.status, 200);
  t.equal(found.body.object, "list");
  t.equal(found.body.data[0].id, id);
  t.match(found.body.data[0].scores, { relevance: Number, recency: Number, importance: Number, similarity: Number });
  t.ok(found.body.data.length <= 2);

  const deleted = await api("DELETE", `/v1/memories/${id}`);
  t.same(deleted.body, { id, object: "memory.deleted", deleted: true, purged: false });
  t.equal((await api("GET", `/v1/memories/${id}`)).status, 404);
  t.equal((await api("DELETE", `/v1/memories/${id}`)).status, 404);
  const after = await api("GET", `/v1/memories/search?q=${encodeURIComponent("who plays cello?")}`);
  t.notOk(
    after.body.data.some((m: any) => m.id === id),
    "a deleted memory is never returned",
  );
  const status = await api("GET", "/v1/memories/status");
  t.match(status.body, { embedder: { id: "psyche-lexical-256", dimensions: 256 }, memories: { deleted_pending_purge: 1 } });
});

t.test("bad input: OpenAI's error shape, nothing written", async (t) => {
  const before = await counts();
  const bad: [string, string, unknown, number, string | null][] = [
    ["POST", "/v1/memories", "{not json", 400, "invalid_json"],
    ["POST", "/v1/memories", {}, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "   " }, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "x", importance: 2 }, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "x", kind: "dreamy" }, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "x", surprise: true }, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "x", citations: ["not-a-uuid"] }, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "x", conversation_id: "no spaces or slashes/" }, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "x", conversation_id: 42 }, 400, "invalid_value"],
    ["POST", "/v1/memories", { content: "x".repeat(60_000) }, 413, "request_too_large"],
    ["GET", "/v1/memories/search?q=", undefined, 400, "invalid_value"],
    ["GET", "/v1/memories/search?q=cello&k=0", undefined, 400, "invalid_value"],
    ["GET", "/v1/memories/search?q=cello&k=abc", undefined, 400, "invalid_value"],
    ["GET", "/v1/memories/not-a-uuid", undefined, 400, "invalid_value"],
    ["GET", "/v1/memories/00000000-0000-4000-8000-000000000000", undefined, 404, "memory_not_found"],
    ["DELETE", "/v1/memories/00000000-0000-4000-8000-000000000000?purge=maybe", undefined, 400, "invalid_value"],
    ["GET", "/v1/emotion?limit=-1", undefined, 400, "invalid_value"],
    ["GET", "/v1/mood?limit=0", undefined, 400, "invalid_value"],
    ["POST", "/v1/embeddings", { model: "psyche" }, 400, "invalid_value"],
    ["POST", "/v1/embeddings", { model: "psyche", input: [] }, 400, "invalid_value"],
    ["POST", "/v1/embeddings", { model: "psyche", input: [[1, 2, 3]] }, 400, "invalid_value"],
    ["POST", "/v1/embeddings", { model: "text-embedding-3-small", input: "hi" }, 404, "model_not_found"],
    ["POST", "/v1/embeddings", { model: "psyche", input: "hi", dimensions: 64 }, 400, "invalid_value"],
  ];
  for (const [method, path, body, status, code] of bad) {
    const res = await api(method, path, body);
    t.equal(res.status, status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 40)}`);
    t.match(res.body.error, { message: String, type: String, code }, `${method} ${path} error shape`);
  }
  t.same(await counts(), before, "no memory, mood or job written by a rejected request");
});

t.test("memories of a conversation: stored with it, and a turn is found by its neighbour's words", async (t) => {
  const first = await api("POST", "/v1/memories", {
    content: "Which paint suits a damp bathroom ceiling?",
    kind: "episodic",
    conversation_id: "chat-7",
  });
  t.equal(first.status, 201);
  t.equal(first.body.conversation_id, "chat-7");
  const reply = await api("POST", "/v1/memories", { content: "Then the second one, thanks.", kind: "episodic", conversation_id: "chat-7" });
  const found = await api("GET", `/v1/memories/search?q=${encodeURIComponent("bathroom paint")}&k=5`);
  t.ok(
    found.body.data.some((m: any) => m.id === reply.body.id),
    "the short reply is found through its conversation",
  );
  t.equal(found.body.data[0].id, first.body.id, "the turn that says it comes first");
});

t.test("embeddings through the openai SDK", async (t) => {
  const res = await client.embeddings.create({ model: "psyche", input: ["a cello quartet", "a quartet with cello", "tax forms"] });
  t.equal(res.model, "psyche-lexical-256");
  t.equal(res.data.length, 3);
  const [a, b, c] = res.data.map((d) => d.embedding);
  const dot = (x: number[], y: number[]) => x.reduce((s, v, i) => s + v * y[i]!, 0);
  t.equal(a!.length, 256);
  t.ok(dot(a!, b!) > dot(a!, c!) + 0.3, "similar texts are nearer");
  t.ok(res.usage.prompt_tokens > 0);
  // The SDK asks for base64 by default when encoding_format is not given; check both agree.
  const float = await client.embeddings.create({ model: "psyche-lexical-256", input: "a cello quartet", encoding_format: "float" });
  t.same(
    float.data[0]!.embedding.map((x) => Math.round(x * 1e5)),
    a!.map((x) => Math.round(x * 1e5)),
  );
  const models = await client.models.list();
  t.ok(
    models.data.some((m) => m.id === "psyche-lexical-256"),
    "/v1/models lists the embedder",
  );
});

t.test("a chat turn leaves an episodic memory and an emotion_log row", async (t) => {
  const before = await api("GET", "/v1/emotion");
  t.match(before.body, { object: "emotion", valence: Number, arousal: Number, baseline: { valence: 0.1, arousal: -0.1 } });
  const { data, response } = await client.chat.completions
    .create({
      model: "psyche",
      messages: [{ role: "user", content: "I am so happy today, my best friend is visiting!" }],
      max_tokens: 12,
      seed: 3,
    })
    .withResponse();
  const turnId = response.headers.get("x-psyche-turn")!;
  const reply = data.choices[0]!.message.content!;
  const memory = await until("the turn's memory", async () => {
    const res = await pool.query("select kind, content, source_kind, embedder from memories where source_id = $1", [turnId]);
    return res.rows[0];
  });
  t.match(memory, { kind: "episodic", source_kind: "turn", embedder: "psyche-lexical-256" });
  t.equal(memory.content, `User: I am so happy today, my best friend is visiting!\nPsyche: ${reply}`);
  const emotion = await until("the turn's emotion_log row", async () => {
    const res = await pool.query("select valence, arousal, stimulus_valence from emotion_log where cause = 'turn' and source_id = $1", [
      turnId,
    ]);
    return res.rows[0];
  });
  t.ok(emotion.stimulus_valence > 0, "a happy exchange is pleasant");
  t.ok(emotion.valence > before.body.valence, "and lifts the mood");
  const after = await api("GET", "/v1/emotion?limit=5");
  t.equal(after.body.history[0].source_id, turnId);
  t.equal(after.body.history[0].cause, "turn");
  const mood = await api("GET", "/v1/mood?limit=5");
  // The mood decays toward its baseline by the millisecond: the two reads agree to the third place.
  t.match(mood.body, { object: "mood", baseline: after.body.baseline });
  t.ok(Math.abs(mood.body.valence - after.body.valence) < 1e-3 && Math.abs(mood.body.arousal - after.body.arousal) < 1e-3, "the same mood");
  t.same(mood.body.history, after.body.history, "/v1/emotion is an alias of /v1/mood");
  const search = await api("GET", `/v1/memories/search?q=${encodeURIComponent("best friend visiting")}&k=1`);
  t.equal(search.body.data[0].source.id, turnId, "the conversation is now searchable memory");
});

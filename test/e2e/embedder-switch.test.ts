/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Switching the embedder: a restart with another embedding model queues a re-embedding job
// (pg-boss, maintenance priority) whose progress /v1/memories/status shows; vectors of
// different embedders are never compared.
import t from "tap";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import { lexicalEmbedding } from "../../src/memory/lexical-embedding.js";
import { toVector } from "../../src/db/sql/memories.js";
import { startPsyche } from "../helpers/psyche.js";
import { serverDir } from "../helpers/testdir.js";

const dir = serverDir(t);
const facts = Array.from(
  { length: 40 },
  (_, i) => `Fact number ${i}: the ${["red", "green", "blue", "gold"][i % 4]} box holds ${i * 3} marbles`,
);

t.test("memories made with the built-in embedder", async (t) => {
  const psyche = await startPsyche(t, { dataDir: dir, embeddingModel: "builtin" });
  for (const content of facts) await psyche.mem.memory.remember({ kind: "semantic", content, sourceKind: "api" });
  const status = (await (await fetch(`${psyche.url}/v1/memories/status`)).json()) as any;
  t.same(status.memories.by_embedder, { "psyche-lexical-256": 40 });
  t.equal(status.reembedding, null);
});

t.test("a restart with a GGUF embedding model re-embeds them all", async (t) => {
  const psyche = await startPsyche(t, { dataDir: dir, embeddingModel: ensureTinyModel(dir), embeddingThreads: 2 });
  const id = psyche.mem.embedder.id;
  t.match(id, /^gguf-psyche-tiny-\d+$/);
  let status: any;
  const seen = new Set<number>();
  const deadline = Date.now() + 60_000;
  do {
    status = (await (await fetch(`${psyche.url}/v1/memories/status`)).json()) as any;
    if (status.reembedding) seen.add(status.reembedding.done);
    if (Date.now() > deadline) throw new Error(`re-embedding did not finish: ${JSON.stringify(status)}`);
    await new Promise((r) => setTimeout(r, 20));
  } while (status.reembedding?.status !== "done");
  t.match(status.reembedding, { embedder: id, status: "done", total: 40, done: 40 });
  t.same(status.memories.by_embedder, { [id]: 40 });
  t.ok(seen.size >= 1, `progress observed: ${[...seen].join(", ")}`);
  // The re-embedding job, not a maintenance tick the cron may have queued meanwhile.
  const job = await psyche.db.pool.query(
    "select name, priority, state from pgboss.job where name = 'psyche-maintenance' and data->>'kind' = 'reembed'",
  );
  t.match(job.rows[0], { name: "psyche-maintenance", priority: 10, state: "completed" });

  // A vector from another embedder (different size, even) is never compared: the search runs,
  // and finds that memory by its words alone. Written behind Psyche's back, it joins the
  // full-text index as the memory worker finds it when it starts.
  await psyche.db.pool.query(
    "insert into memories (kind, content, importance, embedding, embedder) values ('semantic', 'the violet box holds nothing', 0.5, $1, 'psyche-lexical-256')",
    [toVector(lexicalEmbedding("the violet box holds nothing"))],
  );
  t.equal(await psyche.mem.memory.indexPending(), 1);
  const found = (await (await fetch(`${psyche.url}/v1/memories/search?q=violet%20box&k=50`)).json()) as any;
  const violet = found.data.find((m: any) => m.content === "the violet box holds nothing");
  t.ok(violet, "found by full text");
  t.equal(violet.scores.similarity, null, "no similarity across embedders");
  t.ok(found.data.filter((m: any) => m.embedder === id).every((m: any) => typeof m.scores.similarity === "number"));
});

// The memory worker's two loops each wake for their own work (workers/memory-worker.ts): a chat's
// end wakes the loop that forms its memory, and not the maintenance loop, which cost one empty
// fetch per chat; a queued consolidation wakes the maintenance loop. A long --poll-ms puts the
// loops' own polls out of the way (the maintenance loop's first is 4 × 5 s after start), so what
// each loop fetches is what woke it. The real stack and pg-boss, with its fetch counted.
import t from "tap";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";
import { MAINTENANCE_QUEUE, MEMORY_QUEUE } from "../../src/jobs/queue.js";

t.test("a chat's end fetches its memory, not maintenance; a consolidation fetches maintenance", async (t) => {
  const psyche = await startPsyche(t, { pollMs: 5000, memoryQuietMs: 0, recallPromptTokens: 0 });
  const { boss, pool } = psyche.db;
  const fetched: string[] = [];
  const fetch = boss.fetch.bind(boss);
  boss.fetch = ((queue: string, ...rest: unknown[]) => {
    fetched.push(queue);
    return (fetch as (...a: unknown[]) => unknown)(queue, ...rest);
  }) as typeof boss.fetch;
  const count = (queue: string) => fetched.filter((q) => q === queue).length;

  const chats = 6;
  for (let i = 0; i < chats; i++) {
    const res = await fetch_(`${psyche.url}/v1/chat/completions`, {
      model: "psyche",
      messages: [{ role: "user", content: `Note ${i}: the kettle is blue.` }],
      max_tokens: 2,
    });
    t.equal(res.status, 200);
  }
  await until("every turn's memory job done", async () => {
    const n = (await pool.query("select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'", [MEMORY_QUEUE]))
      .rows[0].n;
    return n >= chats ? n : undefined;
  });
  t.ok(count(MEMORY_QUEUE) >= 1, `the memory loop fetched: ${count(MEMORY_QUEUE)} times`);
  t.ok(count(MAINTENANCE_QUEUE) < chats / 2, `the maintenance loop fetched ${count(MAINTENANCE_QUEUE)} times for ${chats} chats`);

  const before = count(MAINTENANCE_QUEUE);
  const queued = await fetch_(`${psyche.url}/dream/jobs`, { kind: "consolidate" });
  t.equal(queued.status, 202);
  const id = ((await queued.json()) as { data: { id: string }[] }).data[0]!.id;
  // Its own poll is at least 20 s away: done well before that, the doorbell woke it.
  await until(
    "the consolidation done",
    async () => ((await pool.query("select state from pgboss.job where id = $1", [id])).rows[0]?.state === "completed" ? true : undefined),
    15_000,
  );
  t.ok(count(MAINTENANCE_QUEUE) > before, "the maintenance loop fetched it");
});

function fetch_(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

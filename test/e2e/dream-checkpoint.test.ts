// Dream checkpoints: a running reverie's text so far is saved to its journal entry every few
// seconds, so a worker that dies mid-dream leaves what it had dreamt, not an empty failed entry.
import t from "tap";
import { TestEngine } from "../helpers/scripted-engine.js";
import { randomUUID } from "node:crypto";
import { checkpointDream, startDream } from "../../src/db/sql/dreams.js";
import { closeAbandonedEntries } from "../../src/db/sql/pgboss-jobs.js";
import { markWorkerStopped, registerWorker } from "../../src/db/sql/workers.js";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { CHECKPOINT_MS } from "../../src/dreams/dream.js";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

/** Dreams a word every 100 ms for a while; stops when told. */
class SlowDreamer extends TestEngine {
  readonly modelName = "slow";
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    let text = "";
    const deadline = Date.now() + CHECKPOINT_MS * 3;
    while (Date.now() < deadline && !request.signal?.aborted) {
      const word = `cloud${text.length} `;
      text += word;
      request.onText?.(word, 1);
      await new Promise((r) => setTimeout(r, 100));
    }
    return {
      text,
      finishReason: request.signal?.aborted ? "cancelled" : "stop",
      promptTokens: 5,
      completionTokens: text.split(" ").length - 1,
      toolCalls: [],
    };
  }
  override countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }
  override async dispose(): Promise<void> {}
}

const psyche = await startPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine: new SlowDreamer() });
const pool = psyche.db.pool;

t.test("a running dream's text reaches its journal entry before it ends", async (t) => {
  const queued = await fetch(`${psyche.url}/dream/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "dream" }),
  });
  t.equal(queued.status, 202);
  const mid = await until(
    "a checkpoint",
    async () => (await pool.query("select status, content, tokens from dream_journal where kind = 'dream' and content <> ''")).rows[0],
    15_000,
  );
  t.equal(mid.status, "dreaming", "saved while it still runs");
  t.match(mid.content, /^cloud0 /);
  t.ok(mid.tokens > 0);
  const done = await until(
    "the dream's end",
    async () => (await pool.query("select status, content from dream_journal where kind = 'dream' and status <> 'dreaming'")).rows[0],
    15_000,
  );
  t.ok(done.content.startsWith(mid.content), "the end carries on from the checkpoint");
});

t.test("a dead worker's entry is closed as failed with what it had dreamt", async (t) => {
  const worker = randomUUID();
  await registerWorker(pool, { id: worker, host: "elsewhere", pid: 1, model: "slow" });
  const id = randomUUID();
  await startDream(pool, { id, kind: "dream", jobId: null, focus: null, seedMemoryIds: [], model: "slow", workerId: worker });
  await checkpointDream(pool, id, "half a dream about", 4);
  await markWorkerStopped(pool, worker); // as a SIGKILLed worker's successor finds it: gone
  // The live worker's heartbeat sweeps too, and on a real PostgreSQL it may get there first:
  // either sweep must have closed it.
  await closeAbandonedEntries(pool, 60_000);
  const row = (await pool.query("select status, content, tokens from dream_journal where id = $1", [id])).rows[0];
  t.match(row, { status: "failed", content: "half a dream about", tokens: 4 });
  t.notOk(
    (await closeAbandonedEntries(pool, 60_000)).some((e) => e.id === id),
    "a closed entry is not closed again",
  );
  await checkpointDream(pool, id, "too late", 9);
  t.equal(
    (await pool.query("select content from dream_journal where id = $1", [id])).rows[0].content,
    "half a dream about",
    "a checkpoint never reopens a closed entry",
  );
});

// A chat always wins, even over a model that does not stop when told: 500 ms after the wake,
// the worker abandons the reverie (its end is written whenever it comes) and the chat runs on
// its own sequence. The engine here is scripted to ignore the abort on the dream sequence,
// which the real one never does; everything around it is real.
import t from "tap";
import { TestEngine } from "../helpers/scripted-engine.js";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const DREAM_MS = 6000;

class StubbornEngine extends TestEngine {
  readonly modelName = "stubborn";
  dreamEndedAt = 0;
  chatEndedAt = 0;

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const done = (text: string): GenerateResult => ({ text, finishReason: "stop", promptTokens: 5, completionTokens: 1, toolCalls: [] });
    if (request.sequence === "dream") {
      request.onText?.("a dream that will not stop", 1);
      await new Promise((r) => setTimeout(r, DREAM_MS)); // deaf to request.signal
      this.dreamEndedAt = Date.now();
      return done("a dream that will not stop");
    }
    request.onText?.("hello", 1);
    this.chatEndedAt = Date.now();
    return done("hello");
  }

  override countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  override async dispose(): Promise<void> {}
}

const engine = new StubbornEngine();
const psyche = await startPsyche(t, { recallPromptTokens: 0, memoryTools: false }, { engine });
const pool = psyche.db.pool;

t.test("a reverie that does not stop is abandoned, and the chat goes first", async (t) => {
  const queued = await fetch(`${psyche.url}/dream/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ kind: "dream" }),
  });
  t.equal(queued.status, 202);
  const entry = await until(
    "the dream to start",
    async () => (await pool.query("select id from dream_journal where kind = 'dream' and status = 'dreaming'")).rows[0],
  );
  const chat = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "are you there?" }] }),
  });
  t.equal(chat.status, 200);
  t.equal(((await chat.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content, "hello");
  t.ok(engine.chatEndedAt > 0 && engine.dreamEndedAt === 0, "the chat was answered while the dream was still generating");
  t.equal(psyche.worker.outcomes.get("dream-abandoned"), 1, "the worker abandoned the reverie");
  const ended = await until(
    "the abandoned dream's end to be written",
    async () => {
      const row = (await pool.query("select status, content from dream_journal where id = $1", [entry.id])).rows[0];
      return row.status === "dreaming" ? undefined : row;
    },
    20_000,
  );
  t.match(ended, { status: "paused", content: "a dream that will not stop" }, "its end is written when it comes: paused, to be continued");
  t.ok(engine.dreamEndedAt > engine.chatEndedAt);
});

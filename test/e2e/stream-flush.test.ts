// --stream-flush-ms spaces a stream's writes: the first piece of text is written at once, and
// what comes within the spacing after it waits to go out together. A scripted engine hands over
// pieces of text with the pauses a test gives (the rest at once after the first, so that a
// loaded machine's slow timers cannot spread them past the spacing); everything else is real.
// A turn is begun while it is stored and nothing is written before the store commits
// (src/jobs/hand-off.ts): the engine hands over its first piece once the turn is stored, so a
// slow store does not gather the pieces into the first write.
import t, { type Test } from "tap";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const PIECES = ["Once ", "upon ", "a ", "time ", "there ", "was."];

class PacedEngine extends ScriptedEngine {
  /** Waited for before the first piece: the turn stored (set once the server is up). */
  beforeFirst: () => Promise<unknown> = async () => undefined;

  /** `pauses[i]`: ms after piece i (the last repeats). */
  constructor(private readonly pauses: readonly number[]) {
    super(() => ({ text: PIECES.join("") }));
  }

  override async generate(request: GenerateRequest): Promise<GenerateResult> {
    await this.beforeFirst();
    for (const [i, piece] of PIECES.entries()) {
      request.onText?.(piece, 1);
      const pause = this.pauses[Math.min(i, this.pauses.length - 1)]!;
      if (pause) await new Promise((r) => setTimeout(r, pause));
    }
    const result = await super.generate({ ...request, onText: undefined });
    return { ...result, completionTokens: PIECES.length };
  }
}

async function deltas(flushMs: number, pauses: readonly number[], t: Test) {
  const engine = new PacedEngine(pauses);
  const psyche = await startPsyche(t, { streamFlushMs: flushMs, recallPromptTokens: 0 }, { engine });
  engine.beforeFirst = () =>
    until("the turn stored", async () =>
      (await psyche.db.pool.query("select 1 from turns where status = 'running'")).rowCount ? true : undefined,
    );
  const res = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "A story, please." }] }),
  });
  t.equal(res.status, 200);
  const body = (await res.json()) as { choices: { message: { content: string } }[] };
  t.equal(body.choices[0]?.message.content, PIECES.join(""), "the whole text, however it was written");
  const rows = await psyche.db.pool.query<{ content: string }>(
    "select content from turn_events where kind = 'delta' order by turn_id, seq",
  );
  return rows.rows.map((r) => r.content);
}

t.test("a spacing longer than the reply: the first piece at once, the rest in one write", async (t) => {
  const written = await deltas(1000, [50, 0], t);
  t.same(written, [PIECES[0], PIECES.slice(1).join("")]);
});

t.test("a spacing shorter than the pieces' own: a write for each", async (t) => {
  const written = await deltas(10, [150], t);
  t.equal(written.join(""), PIECES.join(""));
  t.ok(written.length > 2, `${written.length} writes`);
});

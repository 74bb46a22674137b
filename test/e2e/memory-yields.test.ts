// A turn's memory yields to chats under way (workers/memory-worker.ts, jobs/yield-to-chats.ts):
// while another chat is being generated it is not formed, and it is formed once that chat ends,
// or once it has waited --memory-defer-seconds, whichever comes first; a chat that comes while a
// batch of memories is formed holds the rest of the batch. A scripted engine holds a chat open
// for as long as the test needs; everything around it is real.
import t, { type Test } from "tap";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { ScriptedEngine } from "../helpers/scripted-engine.js";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";
import { MEMORY_QUEUE } from "../../src/jobs/queue.js";

/** Two slots; a message with "hold" is generated until the test lets it go (each letGo frees those held until then). */
class HoldingEngine extends ScriptedEngine {
  override readonly slots = 2;
  private release: () => void = () => undefined;
  private held = this.hold();

  constructor() {
    super(() => ({ text: "Noted." }));
  }

  override async generate(request: GenerateRequest): Promise<GenerateResult> {
    if (request.messages.some((m) => m.role === "user" && m.content.includes("hold"))) {
      await Promise.race([this.held, new Promise((r) => request.signal?.addEventListener("abort", r, { once: true }))]);
    }
    return super.generate(request);
  }

  private hold(): Promise<void> {
    return new Promise<void>((r) => (this.release = r));
  }

  letGo(): void {
    const release = this.release;
    this.held = this.hold();
    release();
  }
}

async function chat(url: string, content: string): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content }] }),
  });
}

async function started(t: Test, defer: number) {
  const engine = new HoldingEngine();
  const psyche = await startPsyche(t, { memoryDeferSeconds: defer, recallPromptTokens: 0 }, { engine });
  const pool = psyche.db.pool;
  const running = async () => (await pool.query<{ n: number }>("select count(*)::int as n from turns where status = 'running'")).rows[0]!.n;
  const memoryOf = async (content: string) =>
    (
      await pool.query(
        "select m.id from memories m join turns t on m.source_id = t.id::text join messages u on u.turn_id = t.id where u.content = $1",
        [content],
      )
    ).rows[0];
  return { engine, psyche, running, memoryOf };
}

for (const defer of [600, 1]) {
  t.test(`--memory-defer-seconds ${defer}`, async (t) => {
    const { engine, psyche, running, memoryOf } = await started(t, defer);

    const held = chat(psyche.url, "Please hold the line.");
    await until("the held chat is being generated", async () => ((await running()) === 1 ? true : undefined));
    const answered = await chat(psyche.url, "My cat is called Ferntree.");
    t.equal(answered.status, 200, "a chat beside the held one is answered");

    if (defer === 600) {
      // Several of the worker's polls (100 ms in tests) and rings: without the yield the memory forms in one.
      await new Promise((r) => setTimeout(r, 1500));
      t.equal(await running(), 1, "the held chat is still being generated");
      t.notOk(await memoryOf("My cat is called Ferntree."), "its memory waits while a chat is under way");
      engine.letGo();
      t.equal((await held).status, 200);
      await until("the memory once no chat is under way", () => memoryOf("My cat is called Ferntree."));
      await until("the held chat's memory too", () => memoryOf("Please hold the line."));
      t.pass("both memories formed after the chats ended");
    } else {
      await until("the memory, past its second of waiting", () => memoryOf("My cat is called Ferntree."));
      t.equal(await running(), 1, "formed while the other chat was still being generated");
      engine.letGo();
      t.equal((await held).status, 200);
    }
  });
}

t.test("a chat that comes while a batch of memories is formed holds the rest of the batch", async (t) => {
  const { engine, psyche, running, memoryOf } = await started(t, 600);
  const pool = psyche.db.pool;
  const facts = ["My cat is called Ferntree.", "My bike is green.", "I was born in Ghent."];
  const all = [...facts, "Please hold the line."];
  const formed = async () => (await Promise.all(all.map(memoryOf))).filter(Boolean).length;
  const taken = async () =>
    (await pool.query<{ n: number }>("select count(*)::int as n from pgboss.job where name = $1 and state = 'active'", [MEMORY_QUEUE]))
      .rows[0]!.n;
  const held = chat(psyche.url, "Please hold the line.");
  await until("the held chat is being generated", async () => ((await running()) === 1 ? true : undefined));
  for (const fact of facts) t.equal((await chat(psyche.url, fact)).status, 200, `"${fact}" is answered`);
  // The second held chat comes while the memory worker forms a memory with more of its batch
  // still to form: the test's own step inside that memory's formation, so the timing is the
  // test's, not the machine's.
  const memory = psyche.mem.memory;
  const remember = memory.remember.bind(memory);
  let second: Promise<Response> | undefined;
  let formedBefore = 0;
  memory.remember = async (...args: Parameters<typeof remember>) => {
    if (!second && (await taken()) > 1) {
      formedBefore = await formed();
      second = chat(psyche.url, "Please hold again.");
      await until("the second held chat is being generated", async () => ((await running()) === 1 ? true : undefined));
    }
    return remember(...args);
  };
  engine.letGo();
  t.equal((await held).status, 200, "the first held chat ends, and the memories are formed");
  await until("a batch of more than one memory, and the chat that comes during it", async () => (second ? true : undefined));
  await until("the memory in hand", async () => ((await formed()) > formedBefore ? true : undefined));
  // Several of the worker's polls (100 ms in tests) and rings.
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(await running(), 1, "the second held chat is still being generated");
  t.equal(await formed(), formedBefore + 1, "the memory in hand is formed, the rest of its batch waits");
  engine.letGo();
  t.equal((await second!).status, 200);
  await until("the rest once no chat is under way", async () => ((await formed()) === all.length ? true : undefined));
  t.pass("every memory formed after the chat ended");
});

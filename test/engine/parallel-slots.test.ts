// The real engine's slots on the tiny random model: chats generated at once (one batch) say
// what they say one at a time, a forced tool call in one slot does not force its neighbours,
// a prompt past the context is refused in its slot while the others finish, and a
// conversation's next turn is read from where its slot left off.
import t from "tap";
import { seededAsk } from "../helpers/seeded-ask.js";
import { modelOf } from "../helpers/model-of.js";
import { createLlamaEngine } from "../../src/inference/create-engine.js";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import { createLogger } from "../../src/log.js";
import { ContextOverflow } from "../../src/errors.js";
import { patchState } from "../../src/inference/llama-internals.js";
import type { GenerateRequest, GenerateResult } from "../../src/inference/engine.js";
import { serverDir } from "../helpers/testdir.js";

const dataDir = serverDir(t);
// The engine as a server makes it, a batch's samples in one call where the engine was built here.
const engineConfig = {
  model: ensureTinyModel(dataDir),
  dataDir,
  gpu: "false" as const,
  threads: 2,
  contextSize: 1024,
  parallel: 4,
  promptCacheMb: 64,
};
const engine = await createLlamaEngine(engineConfig, createLogger("silent"));
t.teardown(() => engine.dispose());

const ask = (content: string, seed: number): GenerateRequest => seededAsk(content, seed, { maxTokens: 24 });
const questions = ["the sea at night", "a kiln's firmware", "bread and salt", "the last train home"].map((q, i) => ask(q, i + 1));

t.test("what Psyche relies on of node-llama-cpp's internals is there", async (t) => {
  t.same(await engine.internalsProblems(), []);
});

t.test("four chats at once say what each says alone", async (t) => {
  t.equal(engine.slots, 4);
  const alone = [];
  for (const q of questions) alone.push((await modelOf(engine).generate(q)).text);
  // Decoded together: their pieces of text come interleaved, not one reply after another.
  const order: number[] = [];
  const before = { ...engine.batching };
  const sampledBefore = { ...engine.oneCallSampling };
  const together = await Promise.all(questions.map((q, i) => modelOf(engine).generate({ ...q, onText: () => order.push(i) })));
  // Each step of the model takes every chat's next token (inference/gather-batch.ts), in the
  // order of their sequences, which llama.cpp needs to decode them in one pass.
  t.ok((await patchState()).ordered, "npm install patched node-llama-cpp to add a batch's sequences in id order");
  const batches = engine.batching.batches - before.batches;
  const whole = engine.batching.whole - before.whole;
  t.ok(batches > 0 && whole >= batches * 0.9, `the batches held every generating chat (${whole} of ${batches})`);
  t.same(
    together.map((r) => r.text),
    alone,
  );
  // An engine built here samples a batch's chats in one native call, each with its own
  // sampler: a sampler given another chat's logits would change what that chat says, above.
  if (engine.oneCallSampling)
    t.ok(engine.oneCallSampling.sequences - (sampledBefore.sequences ?? 0) >= 4, "their samples went in calls of several");
  else t.comment("node-llama-cpp's prebuilt binary: one native call per sample");
  const firstOfLast = order.indexOf(3);
  t.ok(firstOfLast !== -1 && firstOfLast < order.lastIndexOf(0), "the last chat spoke before the first had finished");
  t.ok(together.every((r) => r.completionTokens > 0));
});

t.test("more chats than slots: the rest wait for a slot and finish too", async (t) => {
  const many = Array.from({ length: 7 }, (_, i) => ask(`question ${i}`, 100 + i));
  const results = await Promise.all(many.map((q) => modelOf(engine).generate(q)));
  t.equal(results.length, 7);
  t.ok(results.every((r) => r.finishReason === "length" || r.finishReason === "stop"));
});

t.test("a forced tool call in one slot leaves its neighbours free text", async (t) => {
  const tools = [
    {
      name: "read_file",
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string", maxLength: 20 } }, required: ["path"] },
    },
  ];
  const [forced, free] = await Promise.all([
    modelOf(engine).generate({ ...ask("read notes.txt", 5), maxTokens: 80, tools, toolChoice: "required" }),
    modelOf(engine).generate(ask("say something", 6)),
  ]);
  t.equal(forced.finishReason, "tool_calls");
  t.equal(forced.toolCalls[0]?.name, "read_file");
  t.equal(free.toolCalls.length, 0);
  t.ok(free.text.length > 0);
});

t.test("a prompt past the context is refused in its slot; the others finish", async (t) => {
  const long = ask("word ".repeat(3000), 7);
  const [refused, ...rest] = await Promise.allSettled([
    modelOf(engine).generate(long),
    modelOf(engine).generate(questions[0]!),
    modelOf(engine).generate(questions[1]!),
  ]);
  t.equal(refused.status, "rejected");
  t.ok(refused.status === "rejected" && refused.reason instanceof ContextOverflow);
  t.ok(rest.every((r) => r.status === "fulfilled" && r.value.completionTokens > 0));
});

t.test("a conversation's next turn is read from where its slot left off", async (t) => {
  const first = ask("tell me about the harbour", 9);
  const reply = await modelOf(engine).generate(first);
  // Another conversation in between: in another slot, or in this one once it is written out.
  await modelOf(engine).generate(ask("something else entirely", 10));
  const next: GenerateRequest = {
    ...first,
    messages: [...first.messages, { role: "assistant", content: reply.text }, { role: "user", content: "and then?" }],
  };
  const again = await modelOf(engine).generate(next);
  // The reply is read again where the random model's tokens are not how its text tokenizes.
  const cached = again.cachedTokens ?? 0;
  t.ok(cached >= reply.promptTokens, `the whole first prompt was still in its slot (${cached} of ${again.promptTokens} reused)`);
  t.ok((reply.cachedTokens ?? 0) < reply.promptTokens, "the first turn was read, but for what it shares with earlier prompts");
});

t.test("a chat whose slot must drop stale tokens starts beside running chats, not after them", async (t) => {
  t.ok((await patchState()).yields, "npm install patched node-llama-cpp's decode loop (patches/node-llama-cpp+3.22.1.patch)");
  // Every slot holds an earlier prompt by now, so each of these erases what it does not share.
  const ended: string[] = [];
  const run = (name: string, q: GenerateRequest) =>
    modelOf(engine)
      .generate(q)
      .then((r) => (ended.push(name), r));
  const longs = [
    run("long", { ...ask("a long story", 21), maxTokens: 300 }),
    run("long", { ...ask("another long story", 22), maxTokens: 300 }),
  ];
  await run("short", { ...ask("short", 23), maxTokens: 4 });
  await run("late", { ...ask("late", 24), maxTokens: 4 });
  await Promise.all(longs);
  t.same(ended, ["short", "late", "long", "long"]);
});

t.test("a conversation whose slot went to another chat loads its prefix back from disk", async (t) => {
  const oneSlot = (promptCacheMb: number) =>
    createLlamaEngine(
      { model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 2, contextSize: 1024, parallel: 1, promptCacheMb },
      createLogger("silent"),
    );
  const kept = await oneSlot(64);
  const plain = await oneSlot(0);
  t.teardown(async () => {
    await kept.dispose();
    await plain.dispose();
  });
  // Whether a load pays is measured (inference/state-costs.ts): on a loaded machine a slow write
  // made reading win (CI, 2026-12-07: 34 of 121 tokens reused). Set so a load always pays, as
  // the next test does, so this one checks what a load brings back.
  for (let i = 0; i < 9; i++) {
    kept.stateCosts.noteRead(10, 10_000);
    kept.stateCosts.noteLoad(1_000_000, 0);
  }
  const first = ask("tell me about the harbour", 31);
  const reply = await modelOf(kept).generate(first);
  // One slot: the other chat takes it, and what the slot held is written out first.
  await modelOf(kept).generate(ask("something else entirely", 32));
  t.equal(kept.promptCache.saved, 1);
  const next: GenerateRequest = {
    ...first,
    messages: [...first.messages, { role: "assistant", content: reply.text }, { role: "user", content: "and then?" }],
  };
  const again = await modelOf(kept).generate(next);
  t.equal(kept.promptCache.loaded, 1);
  t.equal(kept.promptCache.failed, 0);
  const cached = again.cachedTokens ?? 0;
  t.ok(cached >= reply.promptTokens, `the first turn was loaded, not read (${cached} of ${again.promptTokens})`);
  // The same two turns with nothing between them, on an engine that keeps nothing: the same words.
  t.equal((await modelOf(plain).generate(first)).text, reply.text);
  t.equal((await modelOf(plain).generate(next)).text, again.text);
  t.same(plain.promptCache, { saved: 0, loaded: 0, failed: 0 });
  // And with a chat between them there, the first turn is read again.
  await modelOf(plain).generate(ask("something else entirely", 32));
  t.ok(((await modelOf(plain).generate(next)).cachedTokens ?? 0) < reply.promptTokens);
});

t.test("a conversation's next turn writes out nothing of its own slot; another conversation's does", async (t) => {
  const engine = await createLlamaEngine(
    { model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 2, contextSize: 1024, parallel: 1, promptCacheMb: 64 },
    createLogger("silent"),
  );
  t.teardown(() => engine.dispose());
  // As run-turn.ts builds a turn: the recalled memories just before the latest user message,
  // so the next turn's prompt moves past them.
  const memories = (n: number) => `Remembered ${n}: the harbour light was green and the ferry ran late on Sundays.`;
  const turn = (conversation: string, n: number, before: GenerateRequest["messages"] = []): GenerateRequest => ({
    messages: [
      { role: "system", content: "You are Psyche." },
      ...before,
      { role: "system", content: memories(n) },
      { role: "user", content: `question ${n} of ${conversation}` },
    ],
    maxTokens: 8,
    seed: n,
    conversation,
  });
  const first = turn("a", 1);
  const reply = await modelOf(engine).generate(first);
  const second = await modelOf(engine).generate(turn("a", 2, [first.messages[2]!, { role: "assistant", content: reply.text || "ok" }]));
  t.ok((second.cachedTokens ?? 0) > 0, "the next turn reads on from its slot");
  t.equal(engine.promptCache.saved, 0, "its older rendering (the memories it moved past) was not written out");
  await modelOf(engine).generate(turn("b", 3));
  t.equal(engine.promptCache.saved, 1, "another conversation taking the slot writes it out");
});

t.test("a kept prompt a few tokens ahead of the slot is loaded where loads are measured to pay, read where not", async (t) => {
  const oneSlot = () =>
    createLlamaEngine(
      { model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 2, contextSize: 1024, parallel: 1, promptCacheMb: 64 },
      createLogger("silent"),
    );
  const quickLoads = await oneSlot();
  const slowLoads = await oneSlot();
  t.teardown(async () => {
    await quickLoads.dispose();
    await slowLoads.dispose();
  });
  // The measures the engine would take, set so far apart that its own few cannot move their
  // medians: reading a second a token and loading for nothing, and the other way round.
  for (let i = 0; i < 9; i++) {
    quickLoads.stateCosts.noteRead(10, 10_000);
    quickLoads.stateCosts.noteLoad(1_000_000, 0);
    slowLoads.stateCosts.noteRead(10, 0.001);
    slowLoads.stateCosts.noteLoad(1, 1000);
  }
  const harbour = (when: string, seed: number): GenerateRequest => ({
    ...ask(`tell me about the harbour at ${when}`, seed),
    maxTokens: 40,
  });
  const noon = [];
  for (const engine of [quickLoads, slowLoads]) {
    await modelOf(engine).generate(harbour("dawn", 41));
    // The one slot goes to another chat: what it held is written out.
    await modelOf(engine).generate(ask("something else entirely", 42));
    t.equal(engine.promptCache.saved, 1);
    // A new chat sharing "tell me about the harbour at" with the kept prompt, less with the slot.
    noon.push(await modelOf(engine).generate(harbour("noon", 43)));
  }
  const [loaded, read] = noon as [GenerateResult, GenerateResult];
  t.equal(quickLoads.promptCache.loaded, 1, "loaded where loading is measured to pay");
  t.equal(slowLoads.promptCache.loaded, 0, "read where it is not");
  t.ok(
    (loaded.cachedTokens ?? 0) > (read.cachedTokens ?? 0),
    `more of the prompt from the kept one (${loaded.cachedTokens}) than from the slot (${read.cachedTokens}) of ${read.promptTokens}`,
  );
  t.equal(loaded.text, read.text, "the same words either way");
});

t.test("a prompt read with nothing else generating is measured; one read beside others is not", async (t) => {
  const engine = await createLlamaEngine(engineConfig, createLogger("silent"));
  t.teardown(() => engine.dispose());
  await Promise.all(questions.map((q) => modelOf(engine).generate(q)));
  t.equal(engine.stateCosts.measured.readMsPerToken, undefined, "four at once: no measure");
  await modelOf(engine).generate(ask("a question of its own, read alone", 51));
  t.ok((engine.stateCosts.measured.readMsPerToken ?? 0) > 0, "alone: measured");
});

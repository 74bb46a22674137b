// Decodes on the JavaScript thread (src/inference/llama-internals.ts `decodeOnCallingThread`,
// the addon's `decodeBatchAndSampleNow`, patches/node-llama-cpp+3.22.1.patch): the real engine
// on the tiny model says the same on the main thread as in the hop to libuv's pool, alone and
// four at once; its decodes do go there; an abort still lands between steps (the event loop
// turns while it generates); and it is off unless told (docs/configuration.md says why). The
// prebuilt binary (CI keeps it) has no such call: there every decode hops, as before.
import t from "tap";
import { seededAsk as ask } from "../helpers/seeded-ask.js";
import type { LlamaContext } from "node-llama-cpp";
import { modelOf } from "../helpers/model-of.js";
import { createLlamaEngine } from "../../src/inference/create-engine.js";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import { createLogger } from "../../src/log.js";
import { serverDir } from "../helpers/testdir.js";
import { tinyEngine } from "../helpers/tiny-engine.js";

const { engine, native } = await tinyEngine(t, { decodeOnMainThread: true });
const dataDir = serverDir(t);
const built = typeof native.decodeBatchAndSampleNow === "function";

const questions = ["the sea at night", "a kiln's firmware", "bread and salt", "the last train home"].map((q, i) => ask(q, 20 + i));

t.test("the prebuilt binary, without the call, decodes in the hop as before", { skip: built }, async (t) => {
  t.equal(engine.decodePlaces, undefined);
  t.same(await engine.internalsProblems(), []);
});

t.test("told at creation, a prompt's reading and every step there", { skip: !built && "no decodeBatchAndSampleNow" }, async (t) => {
  t.equal(engine.mainThreadDecode, true);
  await modelOf(engine).generate(ask("a quiet harbour", 6, { maxTokens: 16 }));
  t.equal(engine.decodePlaces?.pool, 0, "its prompt read there too");
  t.ok((engine.decodePlaces?.here ?? 0) >= 16, `its steps there (${engine.decodePlaces?.here})`);
});

t.test(
  "alone and four at once, the same replies on the main thread as in the hop",
  { skip: !built && "node-llama-cpp's prebuilt binary has no decodeBatchAndSampleNow" },
  async (t) => {
    const places = engine.decodePlaces!;
    const run = async (onMain: boolean) => {
      engine.mainThreadDecode = onMain;
      const before = { ...places };
      const alone = [];
      for (const q of questions) alone.push((await modelOf(engine).generate(q)).text);
      const together = (await Promise.all(questions.map((q) => modelOf(engine).generate(q)))).map((r) => r.text);
      return { alone, together, here: places.here - before.here, pool: places.pool - before.pool };
    };
    const hop = await run(false);
    const main = await run(true);
    t.same(main.alone, hop.alone, "each alone");
    t.same(main.together, hop.together, "four at once");
    t.equal(hop.here, 0, "off: no decode on the main thread");
    t.equal(main.pool, 0, "on: no decode in the hop");
    // Each reply's tokens after its first come from a step's decode: 4 replies alone and 4 together.
    t.ok(main.here >= 4 * 16, `on: the steps decoded on the main thread (${main.here})`);
    t.ok(hop.pool >= 4 * 16, `off: in the hop (${hop.pool})`);
  },
);

t.test("on the main thread, an abort lands between steps and timers run", { skip: !built && "no decodeBatchAndSampleNow" }, async (t) => {
  engine.mainThreadDecode = true;
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const signal = AbortSignal.timeout(60);
  const result = await modelOf(engine).generate(ask("a long walk", 3, { maxTokens: 100_000, signal, stop: [] }));
  clearInterval(timer);
  t.equal(result.finishReason, "cancelled");
  t.ok(result.completionTokens > 0, `it generated before the abort (${result.completionTokens} tokens)`);
  t.ok(ticks >= 3, `a 5 ms timer ran while it generated (${ticks} times)`);
});

t.test("off unless told: nothing then stands between the decode loop and the addon", async (t) => {
  // Made and never decoded in: the engine above decodes on the main thread, and a context of this
  // process decoding in the hop would make a second OpenMP team. Without --yield-core, whose
  // threads per batch time the decode's calls (test/engine/yield-core.test.ts).
  const plain = await createLlamaEngine(
    {
      model: ensureTinyModel(dataDir),
      dataDir,
      gpu: "false",
      threads: 2,
      contextSize: 1024,
      parallel: 2,
      promptCacheMb: 0,
      yieldCore: false,
    },
    createLogger("silent"),
  );
  t.teardown(() => plain.dispose());
  t.equal(plain.mainThreadDecode, false);
  t.equal(plain.decodePlaces, undefined);
  const native = ((plain as unknown as { context: LlamaContext }).context as unknown as { _ctx: object })._ctx;
  t.notOk(Object.hasOwn(native, "decodeBatch"), "decodeBatch is the addon's own");
});

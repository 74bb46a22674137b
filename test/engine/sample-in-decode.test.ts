// A batch's samples taken in its decode's own native call (src/inference/llama-internals.ts,
// `sampleInDecode`; the addon's `decodeBatchAndSample`, patches/node-llama-cpp+3.22.1.patch): the
// real engine on the tiny model says the same with it as without, alone and four at once, a
// forced tool call's grammar included, and its steps do go through the one call. The prebuilt
// binary (CI keeps it) has no such call: there the decode loop is checked patched, and the
// engine is checked to have left sampling as it was.
import t from "tap";
import { seededAsk as ask } from "../helpers/seeded-ask.js";
import { modelOf } from "../helpers/model-of.js";
import { tinyEngine } from "../helpers/tiny-engine.js";
import { patchState, sampleInDecode } from "../../src/inference/llama-internals.js";
import type { GenerateRequest } from "../../src/inference/engine.js";

// Each step its own decode, which this counts (not several a call: --decode-ahead).
const { engine, context, native } = await tinyEngine(t, { decodeAhead: 0 });

const questions = ["the sea at night", "a kiln's firmware", "bread and salt", "the last train home"].map((q, i) => ask(q, 10 + i));
const texts = async (asks: GenerateRequest[]) => (await Promise.all(asks.map((q) => modelOf(engine).generate(q)))).map((r) => r.text);

t.test("npm install patched the decode loop to sample in the decode's call", async (t) => {
  t.ok((await patchState()).sampleInDecode);
});

t.test(
  "the prebuilt binary, without the call, samples as before",
  { skip: typeof native.decodeBatchAndSample === "function" },
  async (t) => {
    t.equal(engine.samplesInDecode, false);
    t.same(await engine.internalsProblems(), []);
  },
);

t.test(
  "alone and four at once, the same replies sampled in the decode's call as after it",
  { skip: typeof native.decodeBatchAndSample !== "function" && "node-llama-cpp's prebuilt binary has no decodeBatchAndSample" },
  async (t) => {
    const counts = engine.oneCallSampling!;
    t.ok(engine.samplesInDecode, "on in an engine built here");
    const run = async (on: boolean) => {
      await sampleInDecode(context, counts, on);
      const before = { ...counts };
      const alone = [];
      for (const q of questions) alone.push((await modelOf(engine).generate(q)).text);
      const together = await texts(questions);
      return { alone, together, decodes: counts.decodes - before.decodes, sampled: counts.sequencesInDecodes - before.sequencesInDecodes };
    };
    const off = await run(false);
    const on = await run(true);
    t.same(on.alone, off.alone, "each alone");
    t.same(on.together, off.together, "four at once");
    t.same(on.together, on.alone, "four at once as each alone");
    t.equal(off.decodes, 0, "off: no decode sampled");
    // Each reply's tokens after its first come from a step's decode: 4 replies alone and 4 together.
    t.ok(on.decodes >= 4 * 16, `on: the steps sampled in their decode (${on.decodes})`);
    t.ok(on.sampled > on.decodes, `several sequences in a decode's call when four ran at once (${on.sampled} in ${on.decodes})`);
  },
);

t.test(
  "a forced tool call's grammar holds when sampled in the decode's call",
  { skip: typeof native.decodeBatchAndSample !== "function" && "node-llama-cpp's prebuilt binary has no decodeBatchAndSample" },
  async (t) => {
    const tools = [
      {
        name: "get_weather",
        description: "The weather in a city",
        parameters: { type: "object", properties: { city: { type: "string", maxLength: 20 } }, required: ["city"] },
      },
    ];
    const forced = ask("What is the weather in Oslo?", 7, { tools, toolChoice: "required", maxTokens: 80 });
    const counts = engine.oneCallSampling!;
    await sampleInDecode(context, counts, false);
    const off = await modelOf(engine).generate(forced);
    await sampleInDecode(context, counts, true);
    const before = counts.decodes;
    const on = await modelOf(engine).generate(forced);
    t.ok(counts.decodes > before, "sampled in the decode's call");
    t.equal(on.finishReason, "tool_calls");
    t.equal(on.toolCalls[0]?.name, "get_weather");
    t.same(
      on.toolCalls.map((c) => [c.name, c.arguments]),
      off.toolCalls.map((c) => [c.name, c.arguments]),
    );
  },
);

// Several steps of a chat generating alone in one native call (src/inference/llama-internals.ts
// `decodeAhead`, the addon's `decodeBatchAndSampleAhead`, patches/node-llama-cpp+3.22.1.patch):
// the real engine on the tiny model says the same with it as without, alone and four at once;
// its steps are taken from what was decoded ahead; a reply cut short (a stop sequence, an abort)
// leaves the sequence as it would have been, so the conversation's next turn says the same too;
// a chat that joins one running ahead gets the same reply as alone; a grammar's sampler never
// runs ahead. The prebuilt binary (CI keeps it) has no such call: there
// each step is its own call, as before.
import t from "tap";
import { seededAsk as ask } from "../helpers/seeded-ask.js";
import { modelOf } from "../helpers/model-of.js";
import { tinyEngine } from "../helpers/tiny-engine.js";
import type { GenerateRequest } from "../../src/inference/engine.js";

const { engine, native } = await tinyEngine(t, { decodeAhead: 16 });
const built = typeof native.decodeBatchAndSampleAhead === "function";
const skip = !built && "node-llama-cpp's prebuilt binary has no decodeBatchAndSampleAhead";

const questions = ["the sea at night", "a kiln's firmware", "bread and salt", "the last train home"].map((q, i) =>
  ask(q, 40 + i, { maxTokens: 48 }),
);
const texts = async (asks: GenerateRequest[]) => {
  const out = [];
  for (const q of asks) out.push((await modelOf(engine).generate(q)).text);
  return out;
};
/** Runs `work` with decoding ahead on (16 steps a call at most) or off, and what it counted. */
const way = async <T>(on: boolean, work: () => Promise<T>) => {
  engine.aheadSteps = on ? 16 : 0;
  const before = { ...engine.ahead!.counts };
  const result = await work();
  const after = engine.ahead!.counts;
  return { result, runs: after.runs - before.runs, taken: after.taken - before.taken, dropped: after.dropped - before.dropped };
};

t.test("the prebuilt binary, without the call, makes each step its own call", { skip: built }, async (t) => {
  t.equal(engine.ahead, undefined);
  t.same(await engine.internalsProblems(), []);
});

t.test("alone and four at once, the same replies with it as without", { skip }, async (t) => {
  const off = await way(false, () => texts(questions));
  const on = await way(true, () => texts(questions));
  t.same(on.result, off.result, "each alone");
  t.equal(off.runs, 0, "off: no run ahead");
  t.ok(on.runs >= 4, `on: runs ahead (${on.runs})`);
  // 48 tokens a reply, in runs of 2, 4, 8, 16, 16: most steps taken from them.
  t.ok(on.taken >= 4 * 24, `on: steps taken from them (${on.taken})`);
  const together = (asks: GenerateRequest[]) =>
    Promise.all(
      asks.map((q) =>
        modelOf(engine)
          .generate(q)
          .then((r) => r.text),
      ),
    );
  const offTogether = await way(false, () => together(questions));
  const onTogether = await way(true, () => together(questions));
  t.same(onTogether.result, offTogether.result, "four at once");
  t.same(onTogether.result, off.result, "four at once as alone");
});

t.test("a reply cut short leaves its sequence as it was: the next turn says the same", { skip }, async (t) => {
  // A stop sequence from the middle of the reply the question gets: the reply ends inside a run.
  const question = ask("a kettle's song", 77, { maxTokens: 48 });
  const whole = (await way(false, () => modelOf(engine).generate(question))).result.text;
  const at = [...Array(whole.length - 30).keys()].map((i) => i + 24).find((i) => whole.indexOf(whole.slice(i, i + 3)) === i);
  t.ok(at, `a stop sequence found in ${JSON.stringify(whole)}`);
  const stop = whole.slice(at!, at! + 3);
  const turn = (on: boolean) =>
    way(on, async () => {
      const first = await modelOf(engine).generate({ ...question, stop: [stop] });
      const next = ask("a kettle's song", 78, { maxTokens: 40 });
      next.messages = [...next.messages, { role: "assistant", content: first.text }, { role: "user", content: "and then?" }];
      return [first.text, (await modelOf(engine).generate(next)).text];
    });
  const off = await turn(false);
  const on = await turn(true);
  t.equal(off.result[0], whole.slice(0, at), "off: the reply ends before the stop sequence");
  t.same(on.result, off.result, "the reply and the next turn's");
  t.ok(on.dropped >= 1, `on: what was decoded past the stop dropped (${on.dropped})`);
});

t.test("a chat that starts while another runs ahead: both say what they say alone", { skip }, async (t) => {
  const [a, b] = [ask("a lighthouse", 91, { maxTokens: 200 }), ask("a harbour", 92, { maxTokens: 40 })];
  const staggered = async () => {
    let started: Promise<string> | undefined;
    let seen = 0;
    const first = modelOf(engine).generate({
      ...a,
      onText: () => {
        // Once the first is well under way, the second joins it.
        if (++seen === 5)
          started = modelOf(engine)
            .generate(b)
            .then((r) => r.text);
      },
    });
    const text = (await first).text;
    return [text, await started!];
  };
  const off = await way(false, staggered);
  const on = await way(true, staggered);
  t.same(on.result, off.result);
  t.same(off.result, [(await modelOf(engine).generate(a)).text, (await modelOf(engine).generate(b)).text], "as alone");
  t.ok(on.runs >= 1, `on: runs ahead (${on.runs})`);
});

t.test("an abort lands within a run", { skip }, async (t) => {
  engine.aheadSteps = 16;
  const signal = AbortSignal.timeout(80);
  const result = await modelOf(engine).generate(ask("a long walk", 3, { maxTokens: 100_000, signal, stop: [] }));
  t.equal(result.finishReason, "cancelled");
  // And the slot is left whole: the same question again, unhurried, as with it off.
  const again = (on: boolean) => way(on, () => texts([ask("a long walk", 4, { maxTokens: 24 })]));
  t.same((await again(true)).result, (await again(false)).result);
});

t.test("a grammar's sampler never runs ahead", { skip }, async (t) => {
  const json = await way(true, () =>
    modelOf(engine).generate(ask("a list", 5, { maxTokens: 40, responseFormat: { type: "json_object" } })),
  );
  t.equal(json.runs, 0, "no run ahead under a grammar");
  t.doesNotThrow(() => JSON.parse(json.result.text), json.result.text);
});

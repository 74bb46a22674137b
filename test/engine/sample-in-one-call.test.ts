// A batch's samples in one native call (src/inference/llama-internals.ts, `sampleInOneCall`):
// the grouping, on a scripted native object that records its calls (a unit test of the logic),
// and `sampleInDecode`'s counting and switch (the real call: test/engine/sample-in-decode.test.ts).
// With the engine built here, the real addon's `sampleTokens` runs under the chats of
// test/engine/parallel-slots.test.ts; the prebuilt binary has none, and sampling stays as it was.
import t from "tap";
import type { LlamaContext } from "node-llama-cpp";
import { sampleInDecode, sampleInOneCall } from "../../src/inference/llama-internals.js";

interface Recorded {
  one: unknown[][];
  many: { indexes: number[]; samplers: unknown[] }[];
}

/** A native context whose single samples return 100 + index, and whose batched ones answer `answer`. */
function scripted(answer?: (indexes: number[]) => (number | string)[] | Error) {
  const calls: Recorded = { one: [], many: [] };
  const proto = {
    sampleToken(...args: unknown[]) {
      calls.one.push(args);
      return Promise.resolve(100 + (args[0] as number));
    },
  };
  const native = Object.create(proto) as Record<string, unknown>;
  if (answer)
    native.sampleTokens = (indexes: Int32Array, samplers: unknown[]) => {
      calls.many.push({ indexes: [...indexes], samplers });
      const out = answer([...indexes]);
      return out instanceof Error ? Promise.reject(out) : Promise.resolve(out);
    };
  return {
    context: { _ctx: native } as unknown as LlamaContext,
    native: native as { sampleToken: (...a: unknown[]) => Promise<unknown> },
    calls,
  };
}

t.test("without the patched addon (the prebuilt binary), sampling is left as it was", async (t) => {
  const { context, native, calls } = scripted();
  const before = native.sampleToken;
  t.equal(
    sampleInOneCall(context, () => 4),
    undefined,
  );
  t.equal(native.sampleToken, before);
  t.equal(await native.sampleToken(3, "s"), 103);
  t.same(calls.one, [[3, "s"]]);
  t.equal(
    sampleInOneCall({} as LlamaContext, () => 4),
    undefined,
    "a context without a native object",
  );
});

t.test("a batch's samples go in one call once all have asked, each answered in order", async (t) => {
  const { context, native, calls } = scripted((indexes) => indexes.map((i) => 200 + i));
  let batch = 3;
  const counts = sampleInOneCall(context, () => batch);
  const samplers = [{ n: 1 }, { n: 2 }, { n: 3 }];
  // As node-llama-cpp's decode loop asks: each sequence from its own promise, in microtasks.
  const asked = samplers.map((s, i) => Promise.resolve().then(() => native.sampleToken(i * 2, s)));
  await Promise.resolve();
  await Promise.resolve();
  t.same(calls.many, [{ indexes: [0, 2, 4], samplers }], "called as the third asked, before the event loop turned");
  t.same(await Promise.all(asked), [200, 202, 204]);
  t.same(calls.one, [], "no sample of its own");
  // The next step's batch is a call of its own.
  batch = 2;
  t.same(await Promise.all([native.sampleToken(1, samplers[0]), native.sampleToken(3, samplers[1])]), [201, 203]);
  t.equal(calls.many.length, 2);
  // A batch of four where one sequence was still reading its prompt: the three that asked go at the loop's next turn.
  batch = 4;
  t.same(await Promise.all(samplers.map((s, i) => native.sampleToken(10 + i, s))), [210, 211, 212]);
  t.same(calls.many[2], { indexes: [10, 11, 12], samplers });
  t.same(counts, { calls: 3, sequences: 8, decodes: 0, sequencesInDecodes: 0 });
});

t.test("a batch of one, one sample alone, or one that asks for more than the token, goes as it did", async (t) => {
  const { context, native, calls } = scripted((indexes) => indexes.map((i) => 200 + i));
  let batch = 1;
  sampleInOneCall(context, () => batch);
  t.equal(await native.sampleToken(5, "s"), 105);
  batch = 2;
  t.same(await Promise.all([native.sampleToken(6, "a", true, false), native.sampleToken(7, "b")]), [106, 107]);
  t.same(calls.one, [
    [5, "s"],
    [6, "a", true, false],
    [7, "b"],
  ]);
  t.same(calls.many, []);
});

t.test("a sequence whose sample failed is rejected alone; a failed call rejects its batch, not the next", async (t) => {
  const { context, native } = scripted((indexes) =>
    indexes[0] === 9 ? new Error("context disposed") : indexes.map((i) => (i === 1 ? "grammar refused" : i)),
  );
  let batch = 3;
  sampleInOneCall(context, () => batch);
  const [a, b, c] = await Promise.allSettled([native.sampleToken(0, "a"), native.sampleToken(1, "b"), native.sampleToken(2, "c")]);
  t.same(a, { status: "fulfilled", value: 0 });
  t.match(b, { status: "rejected", reason: { message: "grammar refused" } });
  t.same(c, { status: "fulfilled", value: 2 });
  batch = 2;
  const failed = await Promise.allSettled([native.sampleToken(9, "a"), native.sampleToken(10, "b")]);
  t.match(failed, [
    { status: "rejected", reason: { message: "context disposed" } },
    { status: "rejected", reason: { message: "context disposed" } },
  ]);
  t.same(await Promise.all([native.sampleToken(3, "a"), native.sampleToken(4, "b")]), [3, 4]);
});

t.test("samples in the decode's call: counted with the rest, switched on the context, absent without the call", async (t) => {
  const { context, native } = scripted((indexes) => indexes);
  const counts = sampleInOneCall(context, () => 2)!;
  t.equal(await sampleInDecode(context, counts), false, "the prebuilt binary has no decodeBatchAndSample");
  t.equal((context as unknown as { _psycheSampleInDecode?: boolean })._psycheSampleInDecode, undefined);
  const decoded: number[][] = [];
  (native as Record<string, unknown>).decodeBatchAndSample = (indexes: Int32Array) => {
    decoded.push([...indexes]);
    return Promise.resolve([...indexes].map((i) => 300 + i));
  };
  t.equal(await sampleInDecode(context, counts), true);
  t.equal((context as unknown as { _psycheSampleInDecode?: boolean })._psycheSampleInDecode, true);
  const call = (native as unknown as { decodeBatchAndSample: (i: Int32Array, s: unknown[]) => Promise<number[]> }).decodeBatchAndSample;
  t.same(await call(Int32Array.from([0, 4]), ["a", "b"]), [300, 304]);
  t.same(counts, { calls: 1, sequences: 2, decodes: 1, sequencesInDecodes: 2 });
  // Off and on again: the one wrapper, counted once a call.
  t.equal(await sampleInDecode(context, counts, false), true);
  t.equal((context as unknown as { _psycheSampleInDecode?: boolean })._psycheSampleInDecode, false);
  await sampleInDecode(context, counts, true);
  await (native as unknown as { decodeBatchAndSample: typeof call }).decodeBatchAndSample(Int32Array.from([1]), ["c"]);
  t.same(counts, { calls: 2, sequences: 3, decodes: 2, sequencesInDecodes: 3 });
  t.same(decoded, [[0, 4], [1]]);
});

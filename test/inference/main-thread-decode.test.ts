// When the engine decodes on the JavaScript thread (src/inference/main-thread-decode.ts): decided
// once from the model's size and device, in auto; as told otherwise.
import t from "tap";
import { CPU_MAX_MODEL_BYTES, decodeOnMainThread } from "../../src/inference/main-thread-decode.js";

t.test("auto: a small model on the CPU, nothing larger, nothing on a GPU", async (t) => {
  t.equal(decodeOnMainThread({ mode: "auto", gpu: false, modelBytes: 511_936 }), true, "the tiny model");
  t.equal(decodeOnMainThread({ mode: "auto", gpu: false, modelBytes: CPU_MAX_MODEL_BYTES }), true, "at the limit");
  t.equal(decodeOnMainThread({ mode: "auto", gpu: false, modelBytes: CPU_MAX_MODEL_BYTES + 1 }), false, "just over it");
  t.equal(decodeOnMainThread({ mode: "auto", gpu: false, modelBytes: 531_000_000 }), false, "the bench model");
  t.equal(decodeOnMainThread({ mode: "auto", gpu: true, modelBytes: 511_936 }), false, "not measured on a GPU: the hop");
});

t.test("true and false decide whatever the model", async (t) => {
  for (const gpu of [false, true])
    for (const modelBytes of [1, 10 ** 10]) {
      t.equal(decodeOnMainThread({ mode: true, gpu, modelBytes }), true);
      t.equal(decodeOnMainThread({ mode: false, gpu, modelBytes }), false);
    }
});

t.test("in one process, auto follows the first engine's choice", async (t) => {
  const { decodeOnMainThreadHere } = await import("../../src/inference/main-thread-decode.js");
  t.equal(decodeOnMainThreadHere({ mode: "auto", gpu: false, modelBytes: 531_000_000 }), false, "the first: a large model, the hop");
  t.equal(decodeOnMainThreadHere({ mode: "auto", gpu: false, modelBytes: 511_936 }), false, "a small one after it keeps the hop");
  t.equal(decodeOnMainThreadHere({ mode: true, gpu: false, modelBytes: 511_936 }), true, "as told, whatever came first");
  t.equal(decodeOnMainThreadHere({ mode: "auto", gpu: false, modelBytes: 511_936 }), false);
});

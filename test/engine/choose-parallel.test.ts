// How many chat slots the engine gets without --parallel: four on a CPU (the real engine, the
// tiny model), as many as the free memory holds on a GPU (the sizing, with a GPU's memory given
// as numbers: no GPU on these machines), and --parallel whenever it is given.
import t from "tap";
import { chooseParallel, CPU_PARALLEL, MAX_PARALLEL } from "../../src/inference/choose-parallel.js";
import { createLlamaEngine } from "../../src/inference/create-engine.js";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import { createLogger } from "../../src/log.js";
import { serverDir } from "../helpers/testdir.js";

const GiB = 2 ** 30;
/** A context of n sequences: 1 GiB of cache each, 0.5 GiB of buffers. */
const linear = async (sequences: number) => sequences * GiB + 0.5 * GiB;

t.test("on a GPU: as many as 90% of the free memory holds, one sequence kept for dreams", async (t) => {
  // 10 GiB free: 9 GiB to use; (n + 1) + 0.5 <= 9 gives n = 7.
  const c = await chooseParallel({ requested: undefined, gpu: true, freeGpuBytes: 10 * GiB, gpuBytesFor: linear });
  t.equal(c.parallel, 7);
  t.match(c.why, /GPU/);
  const asked: number[] = [];
  const big = await chooseParallel({
    requested: undefined,
    gpu: true,
    freeGpuBytes: 1000 * GiB,
    gpuBytesFor: async (n) => (asked.push(n), linear(n)),
  });
  t.equal(big.parallel, MAX_PARALLEL, "never more than the most --parallel allows");
  t.ok(asked.length <= 3, "a memory that holds the most is found without a search");
});

t.test("a GPU with room for fewer than four, and a CPU, get four", async (t) => {
  const small = await chooseParallel({ requested: undefined, gpu: true, freeGpuBytes: 3 * GiB, gpuBytesFor: linear });
  t.equal(small.parallel, CPU_PARALLEL);
  t.match(small.why, /fewer/);
  let estimated = false;
  const cpu = await chooseParallel({
    requested: undefined,
    gpu: false,
    freeGpuBytes: 0,
    gpuBytesFor: async (n) => ((estimated = true), linear(n)),
  });
  t.equal(cpu.parallel, CPU_PARALLEL);
  t.notOk(estimated, "no GPU estimate on a CPU");
});

t.test("--parallel wins", async (t) => {
  t.same(await chooseParallel({ requested: 2, gpu: true, freeGpuBytes: 100 * GiB, gpuBytesFor: linear }), {
    parallel: 2,
    why: "--parallel",
  });
});

t.test("the real engine on a CPU, --parallel unset: four slots", async (t) => {
  const dataDir = serverDir(t);
  const engine = await createLlamaEngine(
    { model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 1, contextSize: 512 },
    createLogger("silent"),
  );
  t.teardown(() => engine.dispose());
  t.equal(engine.slots, CPU_PARALLEL);
});

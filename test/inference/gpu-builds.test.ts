// `--gpu auto` that ends on the CPU beside a GPU engine npm install built says so, naming the
// flag that uses it; finished builds only, and nothing when the CPU was asked for or a GPU taken.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import t, { type Test } from "tap";
import { localGpuBuilds, unusedGpuBuild } from "../../src/inference/gpu-builds.js";

function builds(t: Test, finished: string[], cutShort: string[] = []): string {
  const dir = t.testdir();
  for (const b of [...finished, ...cutShort]) mkdirSync(join(dir, b, "Release"), { recursive: true });
  for (const b of finished) writeFileSync(join(dir, b, "Release", "llama-addon.node"), "");
  return dir;
}

t.test("finished GPU builds are found by backend; CPU builds and builds cut short are not", async (t) => {
  const dir = builds(t, ["linux-x64", "linux-x64-cuda", "linux-x64-vulkan"], ["linux-arm64-cuda"]);
  t.same(
    localGpuBuilds(dir).sort((a, b) => a.build.localeCompare(b.build)),
    [
      { build: "linux-x64-cuda", backend: "cuda" },
      { build: "linux-x64-vulkan", backend: "vulkan" },
    ],
  );
  t.same(localGpuBuilds(join(dir, "absent")), [], "no builds folder: none");
});

t.test("auto on the CPU beside a CUDA build names --gpu cuda", async (t) => {
  const dir = builds(t, ["linux-x64", "linux-x64-cuda"]);
  t.match(unusedGpuBuild("auto", false, dir), /--gpu cuda uses it/);
  t.equal(unusedGpuBuild("auto", "cuda", dir), undefined, "the GPU was taken");
  t.equal(unusedGpuBuild("false", false, dir), undefined, "the CPU was asked for");
  t.equal(unusedGpuBuild("auto", false, builds(t, ["linux-x64"])), undefined, "only a CPU build here");
  t.equal(unusedGpuBuild("auto", false, builds(t, [], ["linux-x64-cuda"])), undefined, "a GPU build cut short");
});

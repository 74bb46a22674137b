// The serving bench's yardstick named by PSYCHE_BENCH_LLAMA_SERVER (bench/llama-server.ts): used
// as it is, its commit read from its --version; anything else skipped with the reason, never
// measured as llama-server.
import t from "tap";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureLlamaServer } from "../../bench/llama-server.js";

const dir = t.testdir();
const program = (name: string, says: string) => {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\necho 'version: 0.5.0-dev' >&2\necho '${says}' >&2\n`);
  chmodSync(path, 0o755);
  return path;
};
const said: string[] = [];
const given = (path: string) => {
  const before = process.env.PSYCHE_BENCH_LLAMA_SERVER;
  process.env.PSYCHE_BENCH_LLAMA_SERVER = path;
  try {
    return ensureLlamaServer((line) => said.push(line), "cuda");
  } finally {
    if (before === undefined) delete process.env.PSYCHE_BENCH_LLAMA_SERVER;
    else process.env.PSYCHE_BENCH_LLAMA_SERVER = before;
  }
};

t.test("a llama-server built elsewhere: used as it is, with the commit it names", async (t) => {
  const path = program("llama-server", "version: 0.5.0-dev (build 252, commit de3ff81)");
  t.same(given(path), { path, commit: "de3ff81", builtSeconds: null, given: true });
  t.same(said, [], "nothing built");
});

t.test("a path that is not there, or a program that names no commit: skipped, saying why", async (t) => {
  const missing = given(join(dir, "nowhere"));
  t.match(missing, { skipped: /PSYCHE_BENCH_LLAMA_SERVER names .*nowhere, which is not there/ });
  const other = given(program("other", "some other program 1.0"));
  t.match(other, { skipped: /names no commit: is it llama-server\?/ });
});

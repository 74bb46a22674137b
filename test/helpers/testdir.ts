// A test directory that outlives what runs in it. tap removes a test's directory when the test
// ends, and two of its plugins each wrap that end: @tapjs/fixture (remove the directory) and
// @tapjs/after (run the teardowns), the later wrapper first. A test that asks for its directory
// before its first teardown therefore loses the directory while its servers still run in it:
// the embedded database then fails on files it had not opened yet ("could not open file"), and
// may not stop at all. Registering a teardown first puts them in order: teardowns, then removal.
import type { Test } from "tap";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const roots = new WeakMap<Test, { dir: string; made: number }>();

/** A new directory under `t`'s test directory, removed only after `t`'s teardowns have run. */
export function serverDir(t: Test, name = "psyche"): string {
  let root = roots.get(t);
  if (!root) {
    t.teardown(() => undefined);
    // testdir() empties the directory: asked for once per test, so a second server keeps the first's files.
    root = { dir: t.testdir(), made: 0 };
    roots.set(t, root);
  }
  const dir = join(root.dir, `${name}-${++root.made}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

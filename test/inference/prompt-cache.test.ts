// The prompt cache's bookkeeping (src/inference/prompt-cache.ts) over real files: a sequence
// here writes its tokens as the state, 10 bytes a token, and reads them back. The real engine's
// states are tested in test/engine/parallel-slots.test.ts.
import t from "tap";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { PromptCache, type StateSequence } from "../../src/inference/prompt-cache.js";

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

class FileSequence implements StateSequence {
  constructor(public contextTokens: number[] = []) {}
  async saveStateToFile(path: string) {
    const body = JSON.stringify(this.contextTokens).padEnd(this.contextTokens.length * 10);
    writeFileSync(path, body);
    return { fileSize: body.length };
  }
  async loadStateFromFile(path: string) {
    this.contextTokens = JSON.parse(readFileSync(path, "utf8")) as number[];
  }
  async clearHistory() {
    this.contextTokens = [];
  }
}

t.test("a saved prompt loads back into another sequence, and is found by its prefix", async (t) => {
  const cache = new PromptCache(10_000, t.testdir());
  t.teardown(() => cache.dispose());
  const a = new FileSequence(range(0, 100));
  t.equal(await cache.save(a), true);
  t.equal(cache.size, 1);
  t.equal(cache.best([...range(0, 60), 7])?.shared, 60);
  t.equal(cache.best(range(0, 60))?.shared, 60, "never more than the prompt");
  t.equal(cache.best([5, 6]), undefined, "nothing shared");
  const b = new FileSequence(range(500, 30));
  await cache.load(b, cache.best(range(0, 120))!.entry);
  t.same(b.contextTokens, range(0, 100));
});

t.test("a state held already is not written again; one it extends is replaced", async (t) => {
  const cache = new PromptCache(100_000, t.testdir());
  t.teardown(() => cache.dispose());
  await cache.save(new FileSequence(range(0, 100)));
  t.equal(await cache.save(new FileSequence(range(0, 80))), false, "a prefix of a kept prompt");
  t.equal(await cache.save(new FileSequence(range(0, 150))), true);
  t.equal(cache.size, 1, "the 100 tokens it extends are gone");
  t.equal(cache.best(range(0, 200))?.shared, 150);
  await new Promise((r) => setTimeout(r, 20));
  t.equal(readdirSync(cache.dir).length, 1, "and so is their file");
});

t.test("over the budget, the least recently used go first; a state too big is not kept", async (t) => {
  const cache = new PromptCache(2_500, t.testdir());
  t.teardown(() => cache.dispose());
  await cache.save(new FileSequence(range(0, 100)));
  await cache.save(new FileSequence(range(1000, 100)));
  // Used again: the first is now the more recent of the two.
  t.equal(await cache.save(new FileSequence(range(0, 50))), false);
  await cache.save(new FileSequence(range(2000, 100)));
  t.equal(cache.size, 2);
  t.ok(cache.best(range(0, 10)), "the one used again stayed");
  t.notOk(cache.best(range(1000, 10)), "the least recently used went");
  t.ok(cache.bytes <= 2_500);
  t.equal(cache.fits(300), false, "300 tokens at 10 bytes each are over the budget");
  t.equal(await cache.save(new FileSequence(range(5000, 300))), false);
  t.equal(new PromptCache(0, t.testdir()).fits(1), false, "0 keeps nothing");
});

t.test("a load that fails drops the entry and leaves the sequence empty", async (t) => {
  const cache = new PromptCache(10_000, t.testdir());
  t.teardown(() => cache.dispose());
  await cache.save(new FileSequence(range(0, 100)));
  const entry = cache.best(range(0, 100))!.entry;
  await rm(entry.file);
  const b = new FileSequence(range(500, 30));
  await t.rejects(cache.load(b, entry));
  t.same(b.contextTokens, []);
  t.equal(cache.size, 0);
});

t.test("its folder goes with it, and folders of processes that are gone go with the next", async (t) => {
  const parent = t.testdir();
  const stale = join(parent, "psyche-prompts-999999999-abc");
  const other = join(parent, "something-else");
  mkdirSync(stale);
  mkdirSync(other);
  const cache = new PromptCache(1000, parent);
  t.notOk(existsSync(stale), "no process 999999999");
  t.ok(existsSync(other), "not ours: left");
  t.ok(existsSync(cache.dir) && cache.dir.includes(`psyche-prompts-${process.pid}-`));
  cache.dispose();
  t.notOk(existsSync(cache.dir));
});

t.test("a write that fails leaves no file and no entry", async (t) => {
  const cache = new PromptCache(10_000, t.testdir());
  t.teardown(() => cache.dispose());
  const full = new FileSequence(range(0, 100));
  full.saveStateToFile = async (path: string) => {
    writeFileSync(path, "half a state");
    throw new Error("ENOSPC: no space left on device");
  };
  await t.rejects(cache.save(full), /ENOSPC/);
  t.equal(cache.size, 0);
  t.same(readdirSync(cache.dir), []);
});

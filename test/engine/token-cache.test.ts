// The caching tokenizer against the tiny model's own: the same tokens for any text, copies that
// callers may change, a bound on what it keeps, and the engine's prompt tokenized once a turn.
import t from "tap";
import { modelOf } from "../helpers/model-of.js";
import fc from "fast-check";
import { createLlamaEngine } from "../../src/inference/create-engine.js";
import { ensureTinyModel, loadLlama } from "../../src/inference/load-model.js";
import { CACHED_MIN_CHARS, cachingTokenizer, type CachingTokenizer } from "../../src/inference/token-cache.js";
import { createLogger } from "../../src/log.js";
import { serverDir } from "../helpers/testdir.js";

const dataDir = serverDir(t);
const log = createLogger("silent");
const llama = await loadLlama("false", log);
// Loaded as node-llama-cpp loads it: its own tokenizer (loadModelFile gives it the cache).
const model = await llama.loadModel({ modelPath: ensureTinyModel(dataDir), vocabOnly: true });
t.teardown(() => model.dispose());
const raw = model.tokenizer;

const words = ["file", "tool", " read", "\n", "écrire", "  ", "<|im_start|>", "tests", "🙂", "the"];
const longText = (seed: number, n: number) => Array.from({ length: n }, (_, i) => words[(seed * 7 + i * i) % words.length]).join(" ");

t.test("the same tokens as the model's tokenizer, asked once or again", async (t) => {
  const tokenizer = cachingTokenizer(raw);
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...words), { minLength: 300, maxLength: 900 }),
      fc.boolean(),
      fc.boolean(),
      (parts, special, trim) => {
        const text = parts.join("");
        const options = trim ? "trimLeadingSpace" : undefined;
        const expected = raw(text, special, options);
        t.same(tokenizer(text, special, options), expected);
        t.same(tokenizer(text, special, options), expected);
      },
    ),
    { numRuns: 40 },
  );
  t.ok(tokenizer.stats.hits >= 40, "the second asking of each text came from memory");
  t.same(tokenizer("BOS", "builtin"), raw("BOS", "builtin"), "builtin special tokens pass through");
});

t.test("a caller changing its array changes nothing for the next", async (t) => {
  const tokenizer = cachingTokenizer(raw);
  const text = longText(1, 600);
  const first = tokenizer(text);
  first.length = 3;
  const second = tokenizer(text);
  second.reverse();
  t.same(tokenizer(text), raw(text));
});

t.test("short texts are tokenized each time; what is kept stays within its bound", async (t) => {
  const tokenizer = cachingTokenizer(raw, 5 * CACHED_MIN_CHARS);
  const short = "a short question";
  tokenizer(short);
  tokenizer(short);
  t.same(tokenizer.stats, { hits: 0, misses: 0 }, "not kept");
  const texts = Array.from({ length: 8 }, (_, i) => longText(i, 400).slice(0, 1500));
  t.ok(texts.every((x) => x.length >= CACHED_MIN_CHARS && x.length < 2 * CACHED_MIN_CHARS));
  for (const x of texts) tokenizer(x);
  t.equal(tokenizer.stats.misses, 8);
  tokenizer(texts[7]!);
  t.equal(tokenizer.stats.hits, 1, "the latest is kept");
  tokenizer(texts[0]!);
  t.equal(tokenizer.stats.misses, 9, "the oldest was let go");
});

t.test("the engine tokenizes a turn's long prompt once, across turns too", async (t) => {
  const engine = await createLlamaEngine({ model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 1, contextSize: 4096 }, log);
  t.teardown(() => engine.dispose());
  const stats = (engine.tokenizer as CachingTokenizer).stats;
  t.ok(stats, "the model loaded for the engine has the caching tokenizer");
  const system = { role: "system" as const, content: `You are a coding agent. ${longText(3, 700)}` };
  const first = await modelOf(engine).generate({ messages: [system, { role: "user", content: "List the files." }], maxTokens: 4, seed: 1 });
  const afterFirst = { ...stats };
  t.ok(afterFirst.misses >= 1);
  const second = await modelOf(engine).generate({
    messages: [
      system,
      { role: "user", content: "List the files." },
      { role: "assistant", content: first.text },
      { role: "user", content: "And?" },
    ],
    maxTokens: 4,
    seed: 2,
  });
  t.ok(second.promptTokens > first.promptTokens);
  // The slot choice, the usage count and node-llama-cpp's context window all found it.
  t.ok(stats.hits - afterFirst.hits >= 3, `hits: ${afterFirst.hits} then ${stats.hits}`);
  t.equal(stats.misses, afterFirst.misses, "the system prompt was not tokenized again");
});

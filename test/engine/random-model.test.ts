// The generated models are real GGUF files that node-llama-cpp loads and runs.
import { packageRoot } from "../../src/paths.js";
import t from "tap";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { getLlama, LlamaChat, readGgufFileInfo, resolveChatWrapper } from "node-llama-cpp";
import { TINY_AGENT_SHAPE, TINY_SHAPE, writeRandomModel } from "../../src/inference/random-model.js";
import { getEncoding } from "js-tiktoken";
import { buildVocab } from "../../src/inference/vocab.js";
import { toHalf } from "../../src/inference/gguf/encode.js";

t.test("half-precision encoding", async (t) => {
  t.equal(toHalf(1), 0x3c00);
  t.equal(toHalf(-2), 0xc000);
  t.equal(toHalf(0), 0);
  t.equal(toHalf(65504), 0x7bff);
  t.equal(toHalf(1e9), 0x7c00, "overflow is infinity");
});

t.test("vocabulary: specials, 256 byte tokens, unique pieces", async (t) => {
  const v = buildVocab(0);
  t.equal(v.tokens[v.eosId], "<|im_end|>");
  t.equal(v.tokens.filter((p) => /^<0x[0-9A-F]{2}>$/.test(p)).length, 256);
  t.equal(new Set(v.tokens).size, v.tokens.length, "no duplicate pieces");
  const big = buildVocab(32000);
  t.equal(big.tokens.length, 32000);
  t.equal(new Set(big.tokens).size, 32000);
});

t.test("the tiny model: deterministic file, loads, ChatML, same seed same text", async (t) => {
  const dir = t.testdir();
  const a = join(dir, "a.gguf");
  const b = join(dir, "b.gguf");
  writeRandomModel(a, TINY_SHAPE);
  writeRandomModel(b, TINY_SHAPE);
  t.ok(statSync(a).size < 1_000_000, "under 1 MB");
  t.ok(readFileSync(a).equals(readFileSync(b)), "byte-identical across runs");

  const info = await readGgufFileInfo(a);
  t.equal(info.metadata.general.architecture, "llama");
  t.match(String(info.metadata.tokenizer?.chat_template), "<|im_start|>");

  const llama = await getLlama({ gpu: false, build: "never" });
  const model = await llama.loadModel({ modelPath: a });
  t.teardown(() => model.dispose());
  const wrapper = resolveChatWrapper(model);
  t.equal(wrapper?.constructor.name, "ChatMLChatWrapper");
  t.same(model.detokenize(model.tokenize("hello psyche")), "hello psyche", "the tokenizer round-trips text");
  const ctx = await model.createContext({ contextSize: 1024, threads: 1 });
  const chat = new LlamaChat({ contextSequence: ctx.getSequence(), chatWrapper: wrapper! });
  const run = async (seed: number) =>
    (
      await chat.generateResponse(
        [
          { type: "user", text: "hi" },
          { type: "model", response: [] },
        ],
        { maxTokens: 40, seed, temperature: 1 },
      )
    ).response;
  const first = await run(7);
  t.ok(first.length > 0, "generates text");
  t.match(first, /^[\x20-\x7e\n]*$/, "prefers printable ASCII");
  t.equal(await run(7), first, "same seed, same output");
  t.not(await run(8), first, "another seed, other output");
});

t.test("the tiny-agent model: GPT-4's tokens, token for token, a 32k context, printable replies", async (t) => {
  const path = join(t.testdir(), "agent.gguf");
  writeRandomModel(path, TINY_AGENT_SHAPE);
  const llama = await getLlama({ gpu: false, build: "never" });
  const model = await llama.loadModel({ modelPath: path });
  t.teardown(() => model.dispose());
  t.equal(model.trainContextSize, 32768, "a real model's trained context");
  const cl100k = getEncoding("cl100k_base");
  const samples = [
    "Hello, world! How are you doing today?",
    "export function add(a: number, b: number): number {\n  return a + b; // the sum\n}\n",
    "Unicode: caf\u00e9, na\u00efve, \u201cquotes\u201d, \u65e5\u672c\u8a9e, emoji \u{1f389}, numbers 1234567.89",
    "   leading spaces,\ttabs\n\n\nand they're all's fine   ",
  ];
  for (const text of samples) {
    const ours = model.tokenize(text);
    t.same([...ours], cl100k.encode(text), `the same ids as cl100k_base for ${JSON.stringify(text.slice(0, 30))}`);
    t.equal(model.detokenize(ours), text, "and back to the same text");
  }
  // A long document (llama.cpp's detokenizer tidies " ..." into "...", so only the ids are compared).
  const manual = readFileSync(join(packageRoot(), "docs", "api.md"), "utf8").slice(0, 20000);
  t.same([...model.tokenize(manual)], cl100k.encode(manual), "the API page's first 20,000 characters: the same ids");
  const ctx = await model.createContext({ contextSize: 2048, threads: 1 });
  const chat = new LlamaChat({ contextSequence: ctx.getSequence(), chatWrapper: resolveChatWrapper(model)! });
  const reply = (
    await chat.generateResponse(
      [
        { type: "user", text: "hi" },
        { type: "model", response: [] },
      ],
      { maxTokens: 40, seed: 3, temperature: 1 },
    )
  ).response;
  t.ok(reply.length > 0, "generates text");
  t.match(reply, /^[\x20-\x7e\n]*$/, "printable ASCII");
});

// A short read after a long prompt, stepped back to make one tile of flash attention on the CPU
// (src/inference/read-tile.ts): where it starts, and that the slot reads the turn right: the
// same reply as a slot that reads the whole prompt, and the next turn finds it all held.
import t from "tap";
import { createLlamaEngine } from "../../src/inference/create-engine.js";
import type { LlamaEngine } from "../../src/inference/llama-engine.js";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import { READ_TILE, tiledReadStart } from "../../src/inference/read-tile.js";
import type { PromptMessage } from "../../src/inference/engine.js";
import { createLogger } from "../../src/log.js";
import { modelOf } from "../helpers/model-of.js";
import { serverDir } from "../helpers/testdir.js";

t.test("where a read starts", async (t) => {
  t.equal(tiledReadStart(1000, 37), 1000 - (READ_TILE - 37), "a short read steps back to one tile");
  t.equal(tiledReadStart(1000, READ_TILE / 8), 1000 - (READ_TILE - READ_TILE / 8), "an eighth of a tile steps back");
  t.equal(tiledReadStart(1000, READ_TILE / 8 - 1), 1000, "less than an eighth gains nothing: read as it is");
  t.equal(tiledReadStart(1000, 0), 1000, "nothing to read");
  t.equal(tiledReadStart(1000, READ_TILE), 1000, "a tile already");
  t.equal(tiledReadStart(1000, 500), 1000);
  t.equal(tiledReadStart(READ_TILE, 30), 30, "a slot holding one tile steps back");
  t.equal(tiledReadStart(READ_TILE - 1, 30), READ_TILE - 1, "a slot holding less reads as it is");
  t.equal(tiledReadStart(0, 30), 0);
});

const dataDir = serverDir(t);
const log = createLogger("silent");
const engineFor = async (): Promise<LlamaEngine> => {
  const engine = (await createLlamaEngine(
    { model: ensureTinyModel(dataDir), dataDir, gpu: "false", threads: 1, contextSize: 4096, parallel: 2 },
    log,
  )) as LlamaEngine;
  t.teardown(() => engine.dispose());
  return engine;
};
const words = ["file", "tool", "read", "write", "agent", "path", "tests", "edit"];
const system: PromptMessage = {
  role: "system",
  content: `You are a coding agent. ${Array.from({ length: 400 }, (_, i) => words[(i * i + 3 * i) % words.length]).join(" ")}`,
};
// Greedy, so that two readings of the same prompt give the same reply.
const ask = (messages: PromptMessage[]) => ({ messages, maxTokens: 6, temperature: 0, seed: 1 });

t.test("a warm turn's short read: stepped back, the same reply as a whole read, and all of it held after", async (t) => {
  const warm = await engineFor();
  const first: PromptMessage[] = [system, { role: "user", content: "List the files." }];
  const one = await modelOf(warm).generate(ask(first));
  const second: PromptMessage[] = [
    ...first,
    { role: "assistant", content: one.text },
    { role: "user", content: "Now read the first one." },
  ];
  const two = await modelOf(warm).generate(ask(second));
  const held = two.cachedTokens ?? 0;
  const read = two.promptTokens - held;
  t.ok(read >= READ_TILE / 8 && read < READ_TILE, `a short read (${read} tokens after ${held})`);
  t.equal(warm.tiledReads, 1, "stepped back once");

  const cold = await engineFor();
  const whole = await modelOf(cold).generate(ask(second));
  t.equal(whole.cachedTokens, 0, "the other engine read it all");
  t.equal(cold.tiledReads, 0);
  t.equal(two.text, whole.text, "the same reply");

  const third: PromptMessage[] = [...second, { role: "assistant", content: two.text }, { role: "user", content: "And the second." }];
  const three = await modelOf(warm).generate(ask(third));
  const kept = three.cachedTokens ?? 0;
  t.ok(kept >= two.promptTokens, `the next turn found the second's prompt held (${kept} of ${two.promptTokens})`);
  t.equal(warm.tiledReads, 2);
});

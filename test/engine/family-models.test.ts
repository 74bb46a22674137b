// The family test models (inference/families/): each is chosen the family's own chat wrapper by
// node-llama-cpp, as the real model is, and where the family thinks, what the model writes in its
// syntax comes back split: the thought as reasoning, the answer as text, no tag in either.
import t from "tap";
import { getLlama, resolveChatWrapper } from "node-llama-cpp";
import { FAMILIES } from "../../src/inference/families/families.js";
import { familyEngine, familyModel } from "../helpers/family-engine.js";
import { modelOf } from "../helpers/model-of.js";

const llama = await getLlama({ gpu: false, build: "never" });

for (const family of FAMILIES) {
  t.test(`${family.name}: the family's tokenizer, template and chat wrapper`, async (t) => {
    const model = await llama.loadModel({ modelPath: await familyModel(family.name) });
    t.teardown(() => model.dispose());
    t.equal(resolveChatWrapper(model)?.constructor.name, family.wrapper);
    t.equal(model.trainContextSize, 32768, "a coding agent's prompt fits");
    // Its end of turn is one special token, as the real model's is.
    const end = model.tokenize(family.eot ?? family.eos, true);
    t.equal(end.length, 1, `${family.eot ?? family.eos} is one token`);
    t.equal(model.detokenize(model.tokenize("Hello, psyche.")), "Hello, psyche.", "text round-trips");
  });
}

/** What each thinking family's model writes for a thought and then an answer, in its own syntax. */
const THOUGHT_THEN_ANSWER: Record<string, string> = {
  qwen3: "<think>\nThe user greets me.\n</think>\n\nHello there.",
  "deepseek-r1": "<think>\nThe user greets me.\n</think>\n\nHello there.",
  // The thought V3.1 opens where thinking is on, as llama-server renders its template.
  "deepseek-v3.1": "<think>The user greets me.</think>Hello there.",
  gemma4: "<|channel>thought\nThe user greets me.<channel|>Hello there.",
  "gpt-oss": "<|channel|>analysis<|message|>The user greets me.<|end|><|start|>assistant<|channel|>final<|message|>Hello there.<|return|>",
};

for (const [name, written] of Object.entries(THOUGHT_THEN_ANSWER)) {
  t.test(`${name}: a thought then an answer comes back as reasoning and text`, async (t) => {
    const engine = await familyEngine(name, () => written);
    t.teardown(() => engine.dispose());
    const pieces: { kind: string; text: string }[] = [];
    const r = await modelOf(engine).generate({
      messages: [{ role: "user", content: "hi" }],
      maxTokens: 100,
      onText: (text) => pieces.push({ kind: "text", text }),
      onReasoning: (text) => pieces.push({ kind: "reasoning", text }),
    });
    t.equal(r.text.trim(), "Hello there.");
    t.equal(r.reasoning?.trim(), "The user greets me.");
    t.notMatch(r.text, /think|channel|<\|/, "no tag or channel marker in the text");
    t.notMatch(r.reasoning ?? "", /think>|channel|<\|/, "nor in the reasoning");
    t.equal(
      pieces
        .filter((p) => p.kind === "reasoning")
        .map((p) => p.text)
        .join(""),
      r.reasoning,
      "streamed as it came",
    );
    const firstText = pieces.findIndex((p) => p.kind === "text" && p.text.trim());
    const lastThought = pieces.findLastIndex((p) => p.kind === "reasoning" && p.text.trim());
    t.ok(lastThought >= 0 && lastThought < firstText, "the thought streams before the answer");
    t.ok(r.reasoningTokens! > 0 && r.reasoningTokens! < r.completionTokens, `${r.reasoningTokens} of ${r.completionTokens} tokens`);
    t.equal(r.finishReason, "stop");
  });
}

t.test("qwen3 with thinking off: the prompt closes an empty thought, as Qwen3's switch does", async (t) => {
  const engine = await familyEngine("qwen3", () => "Hello there.");
  t.teardown(() => engine.dispose());
  const ask = (thoughtBudget?: number) =>
    modelOf(engine).generate({ messages: [{ role: "user", content: "hi" }], maxTokens: 20, thoughtBudget });
  const opened = (text: string) => text.includes("<|im_start|>assistant\n<think>\n\n</think>");
  const prompts = () =>
    Array.from({ length: engine.slots }, (_, slot) => engine.tokenizer.detokenize(engine.cachedTokens(slot) as never, true));
  const off = await ask(0);
  t.equal(off.text, "Hello there.");
  t.ok(prompts().some(opened), "the empty thought rendered before the reply");
  t.ok(engine.thinks, "Qwen3 thinks");
});

t.test("deepseek-v3.1: thinking on opens a thought, thinking off closes an empty one, as its template's switch does", async (t) => {
  const engine = await familyEngine("deepseek-v3.1", () => "Hello there.");
  t.teardown(() => engine.dispose());
  const prompt = async (thoughtBudget?: number) => {
    await modelOf(engine).generate({ messages: [{ role: "user", content: `hi ${thoughtBudget}` }], maxTokens: 20, thoughtBudget });
    const prompts = Array.from({ length: engine.slots }, (_, slot) =>
      engine.tokenizer.detokenize(engine.cachedTokens(slot) as never, true),
    );
    return prompts.find((p) => p.includes(`hi ${thoughtBudget}`)) ?? "";
  };
  t.match(await prompt(), /<｜User｜>hi undefined<｜Assistant｜><think>(?!<\/think>)/, "on: a thought opened");
  t.match(await prompt(0), /<｜User｜>hi 0<｜Assistant｜><think><\/think>/, "off: an empty thought closed");
});

t.test("qwen3: a thought budget closes the thought when it is reached", async (t) => {
  // Free text held to letters: a thought the random model would go on with, then whatever follows it.
  const engine = await familyEngine("qwen3", () => ({ gbnf: 'root ::= "<think>\\n" [a-z ]{80,400}' }));
  t.teardown(() => engine.dispose());
  const ask = (thoughtBudget?: number) =>
    modelOf(engine).generate({ messages: [{ role: "user", content: "hi" }], maxTokens: 120, seed: 3, thoughtBudget });
  const free = await ask();
  const bounded = await ask(8);
  t.ok(free.reasoningTokens! > 8, `without a budget, ${free.reasoningTokens} thought tokens`);
  t.ok(bounded.reasoningTokens! <= 8 && bounded.reasoningTokens! > 0, `with a budget of 8, ${bounded.reasoningTokens}`);
  t.ok(bounded.text.length > 0, "the reply goes on after the thought is closed");
  t.notMatch(bounded.text, /<\/?think>/, "no tag in the text");
});

t.test("a family without a thinking channel says so", async (t) => {
  const engine = await familyEngine("llama3.1");
  t.teardown(() => engine.dispose());
  t.equal(engine.thinks, false);
});

t.test("gpt-oss: a reasoning effort is Harmony's own line in the system message, as its template renders reasoning_effort", async (t) => {
  const engine = await familyEngine("gpt-oss");
  t.teardown(() => engine.dispose());
  const vocabulary = await llama.loadModel({ modelPath: await familyModel("gpt-oss"), vocabOnly: true });
  t.teardown(() => vocabulary.dispose());
  const system = (effort?: "low" | "medium" | "high") => {
    const { tokens } = engine.render({ messages: [{ role: "user", content: "hi" }], maxTokens: 10, reasoningEffort: effort });
    return vocabulary.detokenize(tokens, true);
  };
  t.match(system("low"), /Reasoning: low/);
  t.match(system("high"), /Reasoning: high/);
  t.notMatch(system("high"), /Reasoning: (low|medium)/);
  t.match(system(), /Reasoning: medium/, "unasked: the family's default");
});

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
  gemma4: "<|channel>thought\nThe user greets me.<channel|>Hello there.",
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

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw responses */
// Text completions on a family with fill-in-the-middle tokens (Qwen's vocabulary: its
// <|fim_prefix|>, <|fim_suffix|>, <|fim_middle|>), through the real engine: a suffix is
// completed into on /v1/completions and on Ollama's /api/generate, its tokens counted with the
// prompt's; /api/show says the model can insert; a completion's text is never parsed as a
// thought (it is the raw text the model wrote).
import t from "tap";
import { inProcessPsyche } from "../helpers/in-process.js";
import { familyEngine } from "../helpers/family-engine.js";

const engine = await familyEngine("qwen3-coder");
const psyche = await inProcessPsyche(t, { recallPromptTokens: 0, memoryTools: false, maxTokens: 32 }, { engine });
const prefix = "def add(a, b):\n    ";
const suffix = "\n\nprint(add(1, 2))\n";
const tokens = (text: string) => engine.countTokens(text);

t.test("/v1/completions with a suffix: completed into, the fill-in-the-middle tokens read with both", async (t) => {
  const res = await psyche.request("/v1/completions", { body: { model: "coder", prompt: prefix, suffix, max_tokens: 6, seed: 4 } });
  t.equal(res.status, 200);
  const body = (await res.json()) as any;
  t.equal(body.object, "text_completion");
  t.ok(body.usage.completion_tokens > 0);
  t.ok(body.usage.prompt_tokens >= tokens(prefix) + tokens(suffix) + 3, `prompt tokens ${body.usage.prompt_tokens}`);
  const turn = (await psyche.db.pool.query("select prompt, suffix, content from turns where id = $1", [body.psyche.turn_id])).rows[0];
  t.same([turn.prompt, turn.suffix], [prefix, suffix]);
  t.equal(turn.content, body.choices[0].text);
});

t.test("Ollama's /api/generate with a suffix, and /api/show's insert capability", async (t) => {
  const res = await psyche.request("/api/generate", {
    body: { model: "coder", prompt: prefix, suffix, stream: false, options: { num_predict: 4 } },
  });
  t.equal(res.status, 200);
  const body = (await res.json()) as any;
  t.equal(body.done, true);
  t.ok(body.prompt_eval_count >= tokens(prefix) + tokens(suffix) + 3);
  const shown = (await (await psyche.request("/api/show", { body: { model: "coder" } })).json()) as any;
  t.ok(shown.capabilities.includes("insert"), JSON.stringify(shown.capabilities));
  t.equal(shown.details.family, "qwen3");
  t.match(shown.template, /im_start/, "the GGUF's own chat template");
});

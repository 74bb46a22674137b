/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Nothing silently ignored on POST /v1/chat/completions: every field is honoured, accepted
// because it cannot change the reply, or refused with a 400 that names it (README, "What each
// field does"). A refused request stores nothing.
import t from "tap";
import { startPsyche, writtenRows } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const post = async (extra: Record<string, unknown>) => {
  const res = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "hi" }], max_tokens: 2, ...extra }),
  });
  return { status: res.status, body: (await res.json()) as any };
};

t.test("fields that cannot change the reply are accepted", async (t) => {
  for (const extra of [
    { user: "u-1" },
    { store: true },
    { service_tier: "auto" },
    { prompt_cache_key: "k" },
    { safety_identifier: "s" },
    { modalities: ["text"] },
    { metadata: { source: "test" } },
    { functions: null, audio: null },
  ]) {
    t.equal((await post(extra)).status, 200, JSON.stringify(extra));
  }
});

t.test("fields this server cannot honour, and unknown ones, are a 400 naming them; nothing is stored", async (t) => {
  const before = await writtenRows(psyche);
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ audio: { voice: "alloy", format: "wav" } }, "audio", /audio output is not available/],
    [{ modalities: ["text", "audio"] }, "modalities[1]", /text only/],
    [{ prediction: { type: "content", content: "x" } }, "prediction", /predicted outputs/],
    [{ web_search_options: {} }, "web_search_options", /web search/],
    [{ functions: [{ name: "f" }] }, "functions", /send tools/],
    [{ function_call: "auto" }, "function_call", /send tool_choice/],
    [{ reasoning_effort: "low" }, "reasoning_effort", /reasoning model/],
    [{ verbosity: "low" }, "verbosity", /verbosity/],
    [{ top_k: 40 }, "top_k", /Unrecognized request argument supplied: top_k/],
    [{ repetition_penalty: 1.1 }, "repetition_penalty", /Unrecognized request argument supplied/],
  ];
  for (const [extra, param, message] of cases) {
    const r = await post(extra);
    t.equal(r.status, 400, JSON.stringify(extra));
    t.match(r.body.error, { type: "invalid_request_error", param, message }, JSON.stringify(extra));
  }
  t.same(await writtenRows(psyche), before);
});

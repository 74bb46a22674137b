/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Every field of POST /v1/chat/completions is honoured, accepted because it cannot change the
// reply, refused with a 400 that names it (one OpenAI defines that would change the reply and
// cannot be honoured), or, when this server does not know it, ignored and named (a header, a
// log line, a metric); --strict-params refuses those instead, and a max_tokens above the
// ceiling and another model's name too (docs/api.md, "What each field does"). A refused request
// stores nothing.
import t from "tap";
import { startPsyche, writtenRows } from "../helpers/psyche.js";

// A context that holds a long tool description (the tiny model's vocabulary spends about a token a character).
const psyche = await startPsyche(t, { recallPromptTokens: 0, contextSize: 16_384 });
/** psyche_ignored_request_fields_total, summed over its labels. */
const metric = async () => {
  const text = await (await fetch(`${psyche.url}/metrics`)).text();
  return [...text.matchAll(/^psyche_ignored_request_fields_total\{[^}]*api="chat\.completions"[^}]*\} (\d+)/gm)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
};
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

t.test("fields OpenAI defines that this server cannot honour are a 400 naming them; nothing is stored", async (t) => {
  const before = await writtenRows(psyche);
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ audio: { voice: "alloy", format: "wav" } }, "audio", /audio output is not available/],
    [{ modalities: ["text", "audio"] }, "modalities[1]", /text only/],
    [{ prediction: { type: "content", content: "x" } }, "prediction", /predicted outputs/],
    [{ web_search_options: {} }, "web_search_options", /web search/],
    [{ functions: [{ name: "f" }] }, "functions", /send tools/],
    [{ function_call: "auto" }, "function_call", /send tool_choice/],
  ];
  for (const [extra, param, message] of cases) {
    const r = await post(extra);
    t.equal(r.status, 400, JSON.stringify(extra));
    t.match(r.body.error, { type: "invalid_request_error", param, message }, JSON.stringify(extra));
  }
  t.same(await writtenRows(psyche), before);
});

t.test(
  "what coding agents send is served: unknown fields and reasoning ignored and named, max_tokens clamped, any model name",
  async (t) => {
    const before = await metric();
    const res = await fetch(`${psyche.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "qwen3-coder-plus",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 32_000,
        top_k: 40,
        repetition_penalty: 1.1,
        reasoning_effort: "low",
        verbosity: "low",
        seed: 1,
      }),
    });
    t.equal(res.status, 200);
    t.equal(res.headers.get("x-psyche-ignored-fields"), "top_k, repetition_penalty, verbosity, reasoning_effort", "named in a header");
    const body = (await res.json()) as any;
    t.equal(body.model, "psyche", "answered by the one model, which the reply names");
    const turn = (
      await psyche.db.pool.query("select max_tokens, model from turns where id::text = $1", [body.id.replace(/^chatcmpl-/, "")])
    ).rows[0];
    t.match(turn, { max_tokens: psyche.config.maxTokens, model: "psyche" }, "max_tokens clamped to the ceiling");
    t.equal((await metric()) - before, 4, "psyche_ignored_request_fields_total counts each");

    // A tool description of any length the body limit allows (OpenCode's run to 10,000 characters;
    // the cap was 4,000).
    const long = await post({
      tools: [
        {
          type: "function",
          function: { name: "bash", description: "Run a command. ".repeat(300), parameters: { type: "object", properties: {} } },
        },
      ],
    });
    t.equal(long.status, 200, `a 4,500-character tool description: ${JSON.stringify(long.body).slice(0, 200)}`);
  },
);

t.test("--strict-params refuses instead: unknown fields, max_tokens above the ceiling, another model's name", async (t) => {
  const strict = await startPsyche(t, { recallPromptTokens: 0, strictParams: true, maxTokens: 64 });
  const send = async (body: Record<string, unknown>) => {
    const res = await fetch(`${strict.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "hi" }], max_tokens: 2, ...body }),
    });
    return { status: res.status, body: (await res.json()) as any, ignored: res.headers.get("x-psyche-ignored-fields") };
  };
  const before = await writtenRows(strict);
  t.match(await send({ top_k: 40 }), {
    status: 400,
    body: {
      error: { param: "top_k", code: "unsupported_parameter", message: /Unrecognized request argument supplied: top_k .*--strict-params/ },
    },
  });
  t.match(await send({ max_tokens: 65 }), {
    status: 400,
    body: { error: { param: "max_tokens", message: /above this server's limit of 64/ } },
  });
  t.match(await send({ model: "gpt-4o" }), { status: 404, body: { error: { code: "model_not_found" } } });
  t.same(await writtenRows(strict), before, "nothing was written");
  t.match(
    await send({ reasoning_effort: "high" }),
    { status: 200, ignored: "reasoning_effort" },
    "reasoning controls are ignored and named even so: the model has nothing to change",
  );
});

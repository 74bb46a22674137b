/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Sampling controls reach the model: logit_bias forces and bans tokens, the frequency and
// presence penalties make a favoured token repeat less; logprobs, which the engine cannot give,
// and out-of-range values are refused. The tiny random model, seeded, so each reply is fixed.
import t from "tap";
import { buildVocab } from "../../src/inference/vocab.js";
import { TINY_SHAPE } from "../../src/inference/random-model.js";
import { startPsyche, writtenRows } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const vocab = buildVocab(TINY_SHAPE.vocabSize);
const id = (piece: string) => {
  const i = vocab.tokens.indexOf(piece);
  if (i < 0) throw new Error(`no token ${piece}`);
  return String(i);
};
const memory = id("\u2581memory");
const dream = id("\u2581dream");

async function reply(body: Record<string, unknown>, seed = 1): Promise<{ status: number; content: string; body: any }> {
  const res = await fetch(`${psyche.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "say something" }], max_tokens: 12, seed, ...body }),
  });
  const json = (await res.json()) as any;
  return { status: res.status, content: json.choices?.[0]?.message?.content ?? "", body: json };
}
const count = (text: string, word: string) => text.split(word).length - 1;

t.test("logit_bias +100 forces a token whatever the seed; -100 bans it", async (t) => {
  const free = await reply({});
  const forced = await reply({ logit_bias: { [memory]: 100 } });
  const forcedOtherSeed = await reply({ logit_bias: { [memory]: 100 } }, 7);
  t.equal(count(forced.content, "memory"), 12, `every token is the forced one: ${forced.content}`);
  t.equal(forcedOtherSeed.content, forced.content, "the seed no longer matters");
  t.not(free.content, forced.content);
  const both = await reply({ logit_bias: { [memory]: 100, [dream]: 100 } });
  t.ok(count(both.content, "memory") > 0 && count(both.content, "dream") > 0, `both forced: ${both.content}`);
  const banned = await reply({ logit_bias: { [memory]: -100, [dream]: 100 } });
  t.equal(count(banned.content, "memory"), 0, `a banned token never comes: ${banned.content}`);
  t.equal(count(banned.content, "dream"), 12);
});

t.test("the frequency and presence penalties make a favoured token repeat less", async (t) => {
  // Favoured, not forced: other tokens still compete once it has been said.
  const favoured = await reply({ logit_bias: { [memory]: 6 }, max_tokens: 24 }, 3);
  const penalised = await reply({ logit_bias: { [memory]: 6 }, max_tokens: 24, frequency_penalty: 2, presence_penalty: 2 }, 3);
  t.ok(
    count(favoured.content, "memory") > count(penalised.content, "memory"),
    `${count(favoured.content, "memory")} times, then ${count(penalised.content, "memory")}`,
  );
  const stored = await psyche.db.pool.query("select presence_penalty, frequency_penalty, logit_bias from turns where id = $1", [
    penalised.body.psyche.turn_id,
  ]);
  t.same(stored.rows[0], { presence_penalty: 2, frequency_penalty: 2, logit_bias: { [memory]: 6 } });
});

t.test("what cannot be honoured is refused, naming the field, and nothing is stored", async (t) => {
  const before = await writtenRows(psyche);
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ logprobs: true }, "logprobs", /no token probabilities/],
    [{ top_logprobs: 3 }, "top_logprobs", /no token probabilities/],
    [{ presence_penalty: 2.5 }, "presence_penalty", /2/],
    [{ frequency_penalty: -3 }, "frequency_penalty", /-2/],
    [{ logit_bias: { hello: 1 } }, "logit_bias", /token ids/],
    [{ logit_bias: { [memory]: 101 } }, `logit_bias.${memory}`, /100/],
  ];
  for (const [body, param, message] of cases) {
    const r = await reply(body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.match(r.body.error, { type: "invalid_request_error", param, message }, JSON.stringify(body));
  }
  t.same(await writtenRows(psyche), before);
  t.equal((await reply({ logprobs: false, top_logprobs: 0 })).status, 200, "asking for none is fine");
});

t.test("a token id past the model's vocabulary fails the turn with a message that says so", async (t) => {
  const r = await reply({ logit_bias: { "99999": 5 } });
  t.ok(r.status >= 400, `status ${r.status}`);
  t.match(r.body.error.message, /logit_bias names token 99999, which is not in the model's vocabulary \(\d+ tokens\)/);
});

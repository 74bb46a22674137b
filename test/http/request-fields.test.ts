// Which fields of a request are read, refused by name, or ignored and named.
import t from "tap";
import { fieldsToIgnore, withoutFields } from "../../src/http/request-fields.js";
import { UserError } from "../../src/errors.js";

const rules = { known: { model: 1, messages: 1, max_tokens: 1 }, notHonoured: { audio: "audio output is not available" } };
const body = {
  model: "m",
  messages: [],
  top_k: 40,
  client_metadata: { a: 1 },
  reasoning_effort: "low",
  thinking: { type: "enabled" },
  audio: null,
};

t.test("unknown fields and reasoning controls are ignored; known ones read; a not-honoured one set to null passes", async (t) => {
  const ignored = fieldsToIgnore(body, rules, false);
  t.same(ignored, ["top_k", "client_metadata", "reasoning_effort", "thinking"]);
  t.same(Object.keys(withoutFields(body, ignored)), ["model", "messages", "audio"]);
  t.same(fieldsToIgnore({ model: "m", reasoning_effort: null }, rules, false), [], "a null reasoning control asks for nothing");
});

t.test("strict: an unknown field is refused by name; reasoning controls are still only ignored", async (t) => {
  t.throws(() => fieldsToIgnore({ model: "m", top_k: 40 }, rules, true), {
    param: "top_k",
    code: "unsupported_parameter",
    message: /Unrecognized request argument supplied: top_k/,
  });
  t.same(fieldsToIgnore({ model: "m", reasoning_effort: "high" }, rules, true), ["reasoning_effort"]);
});

t.test("a field that cannot be honoured is refused whatever the mode", async (t) => {
  for (const strict of [false, true]) {
    try {
      fieldsToIgnore({ audio: { voice: "alloy" } }, rules, strict);
      t.fail("not refused");
    } catch (err) {
      t.ok(err instanceof UserError);
      t.match(err, { status: 400, param: "audio", message: /audio: audio output is not available/ });
    }
  }
});

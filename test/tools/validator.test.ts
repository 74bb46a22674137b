// Which JSON Schema draft a client's schema is checked with: the one its $schema names.
import t from "tap";
import { draftOf, validatorFor } from "../../src/tools/validator.js";

const body = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };

t.test("2020-12, 2019-09 and 07 are known; no $schema is draft-07", async (t) => {
  t.equal(draftOf({ ...body, $schema: "https://json-schema.org/draft/2020-12/schema" }), "2020-12");
  t.equal(draftOf({ ...body, $schema: "https://json-schema.org/draft/2019-09/schema" }), "2019-09");
  t.equal(draftOf({ ...body, $schema: "http://json-schema.org/draft-07/schema#" }), "07");
  t.equal(draftOf(body), "07");
  for (const $schema of [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
  ]) {
    const v = validatorFor({ ...body, $schema });
    if (typeof v === "string") throw new Error(v);
    t.ok(v({ n: 3 }), `${$schema}: valid`);
    t.notOk(v({ n: 3.5 }), `${$schema}: invalid`);
  }
});

t.test("each draft's own keywords work: prefixItems (2020-12), dependentRequired (2019-09)", async (t) => {
  const tuple = validatorFor({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "array",
    prefixItems: [{ type: "string" }, { type: "integer" }],
    items: false,
  });
  if (typeof tuple === "string") throw new Error(tuple);
  t.ok(tuple(["a", 1]));
  t.notOk(tuple(["a", "b"]));
  const dep = validatorFor({ $schema: "https://json-schema.org/draft/2019-09/schema", type: "object", dependentRequired: { a: ["b"] } });
  if (typeof dep === "string") throw new Error(dep);
  t.ok(dep({ a: 1, b: 2 }));
  t.notOk(dep({ a: 1 }));
});

t.test("a draft this server does not know is a clear refusal", async (t) => {
  t.match(
    validatorFor({ ...body, $schema: "http://json-schema.org/draft-04/schema#" }),
    /not a draft this server knows \(2020-12, 2019-09 or 07\)/,
  );
  t.match(validatorFor({ ...body, $schema: 7 }), /\$schema must be a string/);
});

// Clients' JSON Schemas (tool parameters, response formats) compiled once each, with `format`
// (email, date-time, uri, ...) checked, not skipped: Ajv knows no format by itself, and a
// client's schema that names one expects it held. The draft is the one the schema's `$schema`
// names: zod 4 (LangChain.js 1.x, the AI SDK) writes 2020-12; draft-07 is the default.
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;
const options = { allErrors: true, strict: false } as const;
const drafts = {
  "2020-12": addFormats(new Ajv2020(options) as unknown as Ajv),
  "2019-09": addFormats(new Ajv2019(options) as unknown as Ajv),
  "07": addFormats(new Ajv(options)),
};
const compiled = new Map<string, ValidateFunction | string>();

/** The draft a schema names in `$schema` (draft-07 when it names none), or why it is not one Psyche knows. */
export function draftOf(schema: Record<string, unknown>): keyof typeof drafts | string {
  const named = schema.$schema;
  if (named === undefined) return "07";
  if (typeof named !== "string") return "$schema must be a string";
  const m = /^https?:\/\/json-schema\.org\/(?:draft\/(2020-12|2019-09)\/schema|draft-(07)\/schema)#?$/.exec(named);
  return m
    ? ((m[1] ?? m[2]) as keyof typeof drafts)
    : `$schema ${JSON.stringify(named)} is not a draft this server knows (2020-12, 2019-09 or 07)`;
}

/** The validator for `schema`, or why the schema is not valid JSON Schema. */
export function validatorFor(schema: Record<string, unknown>): ValidateFunction | string {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (v === undefined) {
    const draft = draftOf(schema);
    try {
      v = draft in drafts ? drafts[draft as keyof typeof drafts].compile(schema) : `not valid JSON Schema: ${draft}`;
    } catch (err) {
      v = `not valid JSON Schema: ${(err as Error).message}`;
    }
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, v);
  }
  return v;
}

// Clients' JSON Schemas (tool parameters, response formats) compiled once each, with `format`
// (email, date-time, uri, ...) checked, not skipped: Ajv knows no format by itself, and a
// client's schema that names one expects it held.
import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
const compiled = new Map<string, ValidateFunction | string>();

/** The validator for `schema`, or why the schema is not valid JSON Schema. */
export function validatorFor(schema: Record<string, unknown>): ValidateFunction | string {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (v === undefined) {
    try {
      v = ajv.compile(schema);
    } catch (err) {
      v = `not valid JSON Schema: ${(err as Error).message}`;
    }
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, v);
  }
  return v;
}

// JSON Schema's `format` (email, date-time, uri, ...) checked, not skipped: Ajv knows none of
// them by itself, and a client's schema that names one expects it held.
import type { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS: its default export arrives as the module object under NodeNext.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

export function withFormats(ajv: Ajv): Ajv {
  return addFormats(ajv);
}

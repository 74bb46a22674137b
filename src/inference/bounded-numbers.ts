// node-llama-cpp writes JSON numbers in its grammars with an exponent of up to 16 digits, for
// `integer` as well as `number` (its GbnfNumber terminal), so a grammar-constrained reply could
// hold the integer 9507E87777726651926, which JSON.parse reads as Infinity. Psyche bounds both
// in every grammar it makes (tool calls and response formats alike): an integer is digits only,
// at most 15 of them, so it is always a safe integer; a number's exponent has at most two
// digits, so it is always finite. The terminal is not exported: inference/llama-internals.ts
// reaches it.

/** At most 15 digits: below Number.MAX_SAFE_INTEGER (16 digits, 9007199254740991). */
export const INTEGER_GRAMMAR = '"-"? ("0" | [1-9] [0-9]{0,14})';
/** A fraction of up to 16 digits and an exponent of up to 2: at most about 1e114, finite. */
export const NUMBER_GRAMMAR = `${INTEGER_GRAMMAR} ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,2})?`;

interface NumberTerminal {
  allowFractional: boolean;
  getGrammar(): string;
}

import { numberTerminal } from "./llama-internals.js";

let applied: Promise<void> | undefined;

/** Makes every grammar node-llama-cpp builds from now on bound its numbers; once per process. */
export function boundGrammarNumbers(): Promise<void> {
  applied ??= (async () => {
    const GbnfNumber = await numberTerminal();
    if (!GbnfNumber)
      throw new Error("node-llama-cpp no longer has its number terminal where Psyche looks: see src/inference/llama-internals.ts");
    GbnfNumber.prototype.getGrammar = function (this: NumberTerminal) {
      return this.allowFractional ? NUMBER_GRAMMAR : INTEGER_GRAMMAR;
    };
  })();
  return applied;
}

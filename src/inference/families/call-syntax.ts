// What a family's tool-call syntax read off the reply's text is: where a call opens, and how
// its calls are read.
import type { ToolSpec } from "../../tools/types.js";

export interface TextCall {
  name: string;
  /** The arguments as JSON text. */
  arguments: string;
}

export interface TextCallSyntax {
  /** What a call opens with: from it on, the reply is held back until it is known to be calls. */
  opens: string;
  /** Only a reply that begins with the opening (after whitespace, and `lead` where written) is held: the JSON form is the whole reply. */
  atStart?: boolean;
  lead?: string;
  /** The calls `text` (a reply's tail from `opens` on) is made of, or undefined where it is not only whole calls. */
  parse(text: string, tools: readonly ToolSpec[]): TextCall[] | undefined;
}

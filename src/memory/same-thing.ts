// When two memories may be folded into one (at store time and by consolidation): only when they
// say the same thing. Vectors alone cannot tell: "I like the new plan" and "I don't like the
// new plan" are neighbours, and two turns that share most words may differ in the one that
// matters. So the words must be the same, in the same order (case, punctuation and spacing
// aside), and they must come from the same conversation, or both from none: the same words
// said in another conversation are another event.
import { words } from "./analyzer.js";

export interface Foldable {
  content: string;
  conversation_id: string | null;
}

export function saySameThing(a: Foldable, b: Foldable): boolean {
  if (a.conversation_id !== b.conversation_id) return false;
  const x = words(a.content);
  const y = words(b.content);
  return x.length === y.length && x.every((w, i) => w === y[i]);
}

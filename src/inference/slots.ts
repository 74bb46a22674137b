// Which of the engine's chat sequences (slots) a prompt goes to. Each slot keeps the tokens it
// last evaluated; a prompt that starts with them is read only from where they end. The choice
// weighs what a slot saves against what it throws away, so the next turn of a conversation
// finds its history, a new conversation finds the persona in a slot holding a short chat, and a
// small side request between two turns of a coding agent's session (its prompt shares only the
// chat template's opening with the session's) goes to another slot instead of evicting the
// session's 20k-token prefix. Slots side by side are decoded in one pass (llama.cpp batches
// sequences only while their ids run consecutively: docs/operations.md; the engine gives slot i
// the i-th chat sequence), so among slots of about the same worth a chat goes next to those
// already generating.

/** How many leading tokens `a` and `b` share. */
export function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * What taking a slot is worth for `prompt`: the tokens it need not read, less half of the cached
 * tokens it would discard (they may be a conversation's next prefix). An empty slot is worth 0.
 */
export function slotScore(cached: readonly number[], prompt: readonly number[]): number {
  const shared = sharedPrefix(cached, prompt);
  return shared - (cached.length - shared) / 2;
}

/**
 * Tokens a slot's state must lose before it is kept on disk (inference/prompt-cache.ts), and
 * the cost of one kept token against one read again: on a CPU a few hundredths, and a 32nd
 * leaves room for a GPU, where reading is faster (docs/decisions.md, "A kept token costs a 32nd").
 */
export const KEEP_MIN_TOKENS = 32;
export const KEPT_TOKEN_COST = 1 / 32;

/**
 * While other chats generate, a write waits for their step under way (it needs the context),
 * and the chat that asked for it starts a step later; then only a state whose loss would cost
 * more than a step's wait, a long prefix, is written (docs/decisions.md, "While others generate").
 */
export const KEEP_BUSY_MIN_TOKENS = 1024;

/**
 * Whether a slot's state of `whole` tokens is worth writing out before `discarded` of them are
 * thrown away, with `generating` generations under way. The write takes every token, but only
 * the discarded ones would be read again: the rest stay in the slot, and are written out when
 * the slot is given away. An agent session's next turn moves past a few dozen tokens of its
 * 20k (the memories recalled for the turn before): writing the 20k for those came before every
 * turn's first token and filled the cache with copies of one prefix (docs/decisions.md, "A
 * conversation's own older rendering is not written out").
 */
export const worthKeeping = (discarded: number, whole: number, generating: number): boolean =>
  discarded >= Math.max(generating > 0 ? KEEP_BUSY_MIN_TOKENS : KEEP_MIN_TOKENS, whole * KEPT_TOKEN_COST);

/**
 * How many more of a prompt's tokens a kept prompt must hold than a slot does to be loaded into
 * it, until the engine has measured what reading and loading cost (inference/state-costs.ts).
 */
export const LOAD_MIN_GAIN = 8;

/**
 * Whether a kept prompt holding `kept` of a prompt's tokens replaces a slot holding `shared` of
 * them, when a load must gain `minGain` tokens.
 */
export const loadsKept = (kept: number, shared: number, minGain = LOAD_MIN_GAIN): boolean => kept >= shared + minGain;

/**
 * A slot's worth when what it would discard can be kept on disk: `kept` is how much of the
 * prompt the best kept prompt holds (loaded into the slot, in place of all it holds, where
 * that is more than the slot's own prefix), `keeps(discarded, whole)` whether the slot's state of
 * `whole` tokens would be kept before `discarded` of them are thrown away, `minGain` what a
 * load must gain (loadsKept). A chat then takes a slot whose prefix it shares rather than an
 * empty one, as the discarded conversation loads back when it returns; a long prefix is still
 * not given up for a few tokens.
 */
export function keptSlotScore(
  cached: readonly number[],
  prompt: readonly number[],
  kept: number,
  keeps: (discarded: number, whole: number) => boolean,
  minGain = LOAD_MIN_GAIN,
): number {
  const shared = Math.min(sharedPrefix(cached, prompt), prompt.length);
  const loads = loadsKept(kept, shared, minGain);
  const discarded = loads ? cached.length : cached.length - shared;
  const cost = discarded > 0 && keeps(discarded, cached.length) ? discarded * KEPT_TOKEN_COST : discarded / 2;
  return (loads ? kept : shared) - cost;
}

/**
 * What a slot's place is worth, in tokens of prompt. Each run of busy slots side by side is
 * one more decode pass for every token the chats make together; a pass costs about what
 * reading a few prompt tokens in one batch does, and chats overlap for tens of tokens. Enough
 * to choose between slots holding unrelated chats of about the same length; far less than a
 * conversation's history, which still wins its slot back.
 */
export const RUN_COST_TOKENS = 32;

/** How many runs of busy slots side by side there are (`busy`: one flag per slot, by index). */
export function busyRuns(busy: readonly boolean[]): number {
  return busy.reduce((runs, b, i) => runs + (b && !busy[i - 1] ? 1 : 0), 0);
}

// Every use Psyche makes of node-llama-cpp's internals, in one place, with a check at start-up
// that they are still there (docs/developing.md, "Library internals", lists each with why and
// what would retire it). node-llama-cpp is pinned in package.json, and its decode loop (and its
// addon's source, for an engine built here) is patched by npm install from
// patches/node-llama-cpp+3.22.1.patch (scripts/patch-node-llama-cpp.mjs).
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LlamaContext, LlamaContextSequence, LlamaModel, Token, TokenBias, Tokenizer } from "node-llama-cpp";

/** The version the patch and the fields below were written against. */
export const PINNED_VERSION = "3.22.1";

const MARKERS = {
  yields: "psyche: yield the context lock between batches",
  ordered: "psyche: a batch's sequences in id order",
  underWay: "psyche: the batch under way",
  sampleInDecode: "psyche: sample in the decode's hop",
} as const;

export interface PatchState {
  /**
   * The decode loop lets other work on the context in between batches. Without it a chat whose
   * slot must drop stale tokens waits for every other running chat to finish.
   */
  yields: boolean;
  /** A batch's sequences are added in id order, and the loop says when a batch is under way and how many it holds. */
  ordered: boolean;
  /** The loop can have a batch's samples taken in its decode's native call (where the addon has `decodeBatchAndSample`). */
  sampleInDecode: boolean;
}

/** Which of the patch's changes the installed decode loop has (node-llama-cpp is loaded here, not before). */
export async function patchState(): Promise<PatchState> {
  const { LlamaContext: Context } = await import("node-llama-cpp");
  const loop = Context.prototype.dispatchPendingBatch.toString();
  return {
    yields: loop.includes(MARKERS.yields),
    ordered: loop.includes(MARKERS.ordered) && loop.includes(MARKERS.underWay),
    sampleInDecode: loop.includes(MARKERS.sampleInDecode),
  };
}

interface ContextInternals {
  /** node-llama-cpp's own: the sequences with tokens queued for the next batch. */
  _queuedDecodeSequenceIds?: unknown;
  /** The patch's: whether a batch is being decoded and sampled now. */
  _psycheBatchUnderWay?: unknown;
  /** The patch's: told the number of sequences of each batch as it is built. */
  _psycheOnBatch?: (sequences: number) => void;
  /** The patch's: a batch's samples taken in its decode's native call (off unless true). */
  _psycheSampleInDecode?: boolean;
}

const internals = (context: LlamaContext) => context as unknown as ContextInternals;

/** Sequences with tokens queued in the context; undefined where that cannot be seen (unpatched, or the field is gone). */
export function queuedSequences(context: LlamaContext, patched: boolean): number | undefined {
  const ids = internals(context)._queuedDecodeSequenceIds;
  return patched && ids instanceof Set ? ids.size : undefined;
}

/** Whether the context is decoding or sampling a batch (the patch). */
export const batchUnderWay = (context: LlamaContext): boolean => internals(context)._psycheBatchUnderWay === true;

/** Has the patched decode loop tell `listener` how many sequences each batch holds. */
export function onBatch(context: LlamaContext, listener: (sequences: number) => void): void {
  internals(context)._psycheOnBatch = listener;
}

type SampleToken = (batchLogitIndex: number, sampler: unknown, ...rest: unknown[]) => Promise<unknown>;
type SampleTokens = (batchLogitIndexes: Int32Array, samplers: unknown[]) => Promise<(number | string)[]>;
interface NativeSampling {
  sampleToken: SampleToken;
  /** The patch's (llama/addon/AddonContext.cpp): several sequences sampled in one call; only in an engine built here. */
  sampleTokens?: SampleTokens;
}

/** Native calls that sampled several sequences, and the sequences they sampled. */
export interface OneCallSampling {
  calls: number;
  sequences: number;
  /** Of the calls, those that decoded the batch too (`sampleInDecode`), and the sequences they sampled. */
  decodes: number;
  sequencesInDecodes: number;
}

/**
 * A batch's sequences sampled in one native call instead of one each, where the engine was
 * built here with the patch (scripts/build-engine.mjs): counts of the calls it made; undefined
 * where it cannot be (the prebuilt binary), and sampling stays as it was. After a decode,
 * node-llama-cpp's loop asks for each sequence's token at once (each in its own promise), and
 * every `sampleToken` is a hop to libuv's pool and back; on the server's one pool thread they
 * queue one after another (docs/benchmarks.md). The asks go together once there are as many as
 * the batch decoded holds (`batchSize`, told by the patched loop), or at the event loop's next
 * turn where fewer come (a sequence still reading its prompt samples nothing); a batch of one,
 * and a call that asks for more than the token (probabilities, confidence), go as they did.
 */
export function sampleInOneCall(context: LlamaContext, batchSize: () => number): OneCallSampling | undefined {
  const native = (context as unknown as { _ctx?: NativeSampling })._ctx;
  if (typeof native?.sampleToken !== "function" || typeof native.sampleTokens !== "function") return undefined;
  const counts: OneCallSampling = { calls: 0, sequences: 0, decodes: 0, sequencesInDecodes: 0 };
  const one = native.sampleToken.bind(native);
  const many = native.sampleTokens.bind(native);
  type Ask = { index: number; sampler: unknown; resolve: (token: number) => void; reject: (err: Error) => void };
  let asks: Ask[] = [];
  let waiting: NodeJS.Immediate | undefined;
  const flush = () => {
    if (waiting) clearImmediate(waiting);
    waiting = undefined;
    const batch = asks;
    asks = [];
    if (!batch.length) return;
    if (batch.length === 1) {
      const [ask] = batch as [Ask];
      return void one(ask.index, ask.sampler).then((token) => ask.resolve(token as number), ask.reject);
    }
    counts.calls++;
    counts.sequences += batch.length;
    many(
      Int32Array.from(batch, (a) => a.index),
      batch.map((a) => a.sampler),
    ).then(
      (results) =>
        batch.forEach((ask, i) => {
          const r = results[i];
          if (typeof r === "number") ask.resolve(r);
          else ask.reject(new Error(r ?? "sampleTokens returned no result for a sequence"));
        }),
      (err: unknown) => batch.forEach((ask) => ask.reject(err instanceof Error ? err : new Error(String(err)))),
    );
  };
  // The addon's methods are read-only on its prototype: defined again on the object itself.
  Object.defineProperty(native, "sampleToken", {
    configurable: true,
    writable: true,
    value: (index: number, sampler: unknown, ...rest: unknown[]) => {
      if (rest.length > 0 || (asks.length === 0 && batchSize() <= 1)) return one(index, sampler, ...rest);
      return new Promise<number>((resolve, reject) => {
        asks.push({ index, sampler, resolve, reject });
        if (asks.length >= batchSize()) flush();
        else waiting ??= setImmediate(flush);
      });
    },
  });
  return counts;
}

type DecodeAndSample = (batchLogitIndexes: Int32Array, samplers: unknown[]) => Promise<(number | string)[]>;

/**
 * A batch's samples taken in its decode's own native call, where the engine was built here with
 * the patch (the addon's `decodeBatchAndSample`, the decode loop's "sample in the decode's hop"):
 * a step of generation was two hops to libuv's pool and back, the decode's and the samples'; now
 * one. The decode loop configures each sequence's sampler before the decode instead of after it
 * (nothing that configures it changes in between: the sequence waits for its token), and a
 * sequence that asks for more than its token (probabilities, confidence) is sampled after, as
 * before (docs/benchmarks.md, the step table). Counts into `counts` (sampleInOneCall's); false
 * where it cannot be, and sampling stays as it was. `on` false turns it off (the bench measures both ways).
 */
export async function sampleInDecode(context: LlamaContext, counts: OneCallSampling, on = true): Promise<boolean> {
  const native = (context as unknown as { _ctx?: { decodeBatchAndSample?: DecodeAndSample } })._ctx;
  if (typeof native?.decodeBatchAndSample !== "function" || !(await patchState()).sampleInDecode) return false;
  if (!(native as { _psycheCounted?: boolean })._psycheCounted) {
    const call = native.decodeBatchAndSample.bind(native);
    // The addon's methods are read-only on its prototype: defined again on the object itself.
    Object.defineProperty(native, "decodeBatchAndSample", {
      configurable: true,
      writable: true,
      value: (indexes: Int32Array, samplers: unknown[]) => {
        counts.calls++;
        counts.decodes++;
        counts.sequences += samplers.length;
        counts.sequencesInDecodes += samplers.length;
        return call(indexes, samplers);
      },
    });
    (native as { _psycheCounted?: boolean })._psycheCounted = true;
  }
  internals(context)._psycheSampleInDecode = on;
  return true;
}

type DecodeNow = (batchLogitIndexes: Int32Array, samplers: unknown[]) => (number | string)[];
interface NativeDecode {
  decodeBatch: () => Promise<void>;
  decodeBatchAndSample?: DecodeAndSample;
  /** The patch's (llama/addon/AddonContext.cpp): decodeBatchAndSample on the calling thread; only in an engine built here. */
  decodeBatchAndSampleNow?: DecodeNow;
}

/** Decodes made on the JavaScript thread, and in the hop to libuv's pool. */
export interface DecodePlaces {
  here: number;
  pool: number;
}

/**
 * The context's decodes made on the JavaScript thread while `here()` says so, by the patched
 * addon's `decodeBatchAndSampleNow`, in place of the hop to libuv's pool and back: two wake-ups of
 * a sleeping thread, tens of microseconds on a busy CPU, nothing beside a step of 17-30 ms but a
 * good part of the tiny model's 0.3 ms (docs/benchmarks.md). `here()` should not change once
 * decodes have begun: the CPU backend's OpenMP team is the calling thread's, and once two threads
 * have decoded there are two teams, whose threads outnumber two cores; libgomp then sleeps at once
 * at the barriers between a pass's operations (the tiny model decoded one stream at 330-430
 * tokens a second on the JavaScript thread after a warm-up in the hop, against some 2,000 either
 * way alone). Both of the decode loop's calls, `decodeBatch` and the patch's
 * `decodeBatchAndSample`, answer as they did, a settled promise's worth. Counts where each decode
 * went; undefined where the addon has no such call (the prebuilt binary), and every decode hops
 * as before. Call it before `sampleInDecode`, which counts what this answers.
 */
export function decodeOnCallingThread(context: LlamaContext, here: () => boolean): DecodePlaces | undefined {
  const native = (context as unknown as { _ctx?: NativeDecode })._ctx;
  const now = native?.decodeBatchAndSampleNow?.bind(native);
  if (!native || !now || typeof native.decodeBatch !== "function") return undefined;
  const places: DecodePlaces = { here: 0, pool: 0 };
  const [decodeBatch, decodeAndSample] = [native.decodeBatch.bind(native), native.decodeBatchAndSample?.bind(native)];
  const define = (name: keyof NativeDecode, value: unknown) =>
    // The addon's methods are read-only on its prototype: defined again on the object itself.
    Object.defineProperty(native, name, { configurable: true, writable: true, value });
  const place = (): boolean => {
    const yes = here();
    places[yes ? "here" : "pool"]++;
    return yes;
  };
  define("decodeBatch", async () => {
    if (place()) now(new Int32Array(0), []);
    else await decodeBatch();
  });
  if (decodeAndSample)
    define("decodeBatchAndSample", async (indexes: Int32Array, samplers: unknown[]) =>
      place() ? now(indexes, samplers) : decodeAndSample(indexes, samplers),
    );
  return places;
}

/** Batches decoded with the threads asked for, and with fewer. */
export interface BatchThreads {
  asked: number;
  fewer: number;
}

/** What decides a batch's threads (inference/core-share.ts), and hears what the batches cost. */
export interface BatchThreadChoice {
  /** The threads a batch of `tokens` decodes with, of the `asked` node-llama-cpp would give it. */
  threadsFor(asked: number, tokens: number): number;
  /** A batch of `tokens` decoded with every thread asked for took `ms`, from its decode's call to its return. */
  decoded(tokens: number, ms: number): void;
}

interface NativeThreads {
  setThreads?: (threads: number) => void;
  initBatch?: (size: number) => unknown;
  decodeBatch?: () => Promise<void>;
  decodeBatchAndSample?: DecodeAndSample;
  decodeBatchAndSampleAhead?: (...args: unknown[]) => Promise<unknown[]>;
}

/**
 * The threads each batch decodes with, as `choice` says of those node-llama-cpp would use: its
 * decode loop sizes the batch (`initBatch`), then sets the threads on the native context before
 * every decode (LlamaContext.js, `_ctx.setThreads` after its threads splitter's allocation), and
 * llama.cpp reads them at the batch's decode (`llama_set_n_threads`: the batch's and a single
 * token's alike). The decode's calls are timed for `choice`, a batch on every thread being the
 * measure; a run ahead (decodeAhead) is its steps, each taken as a token's batch (its first, the
 * batch, may be longer: an estimate on the long side). Counts the batches each way; undefined
 * where the context has no such calls, and every batch takes what node-llama-cpp gives it. Call
 * it before `sampleInDecode` and `decodeAhead`, which wrap what this times.
 */
export function threadsPerBatch(context: LlamaContext, choice: BatchThreadChoice): BatchThreads | undefined {
  const native = (context as unknown as { _ctx?: NativeThreads })._ctx;
  if (!native || typeof native.setThreads !== "function" || typeof native.initBatch !== "function") return undefined;
  if (typeof native.decodeBatch !== "function") return undefined;
  const [set, initBatch, decodeBatch] = [native.setThreads.bind(native), native.initBatch.bind(native), native.decodeBatch.bind(native)];
  const decodeAndSample = native.decodeBatchAndSample?.bind(native);
  const ahead = native.decodeBatchAndSampleAhead?.bind(native);
  const counts: BatchThreads = { asked: 0, fewer: 0 };
  let tokens = 0;
  let every = true;
  // The addon's methods are read-only on its prototype: defined again on the object itself.
  const define = (name: keyof NativeThreads, value: unknown) =>
    Object.defineProperty(native, name, { configurable: true, writable: true, value });
  define("initBatch", (size: number) => {
    tokens = size;
    every = true;
    return initBatch(size);
  });
  define("setThreads", (asked: number) => {
    const threads = asked > 0 ? choice.threadsFor(asked, tokens) : asked;
    every = threads >= asked;
    counts[every ? "asked" : "fewer"]++;
    set(threads);
  });
  const timed = async <T>(decode: () => Promise<T>, steps: (done: T) => number = () => 0): Promise<T> => {
    const startedAt = performance.now();
    const done = await decode();
    const ms = performance.now() - startedAt;
    const n = steps(done);
    if (every) choice.decoded(n > 0 ? 1 : tokens, ms / Math.max(1, n));
    return done;
  };
  define("decodeBatch", () => timed(decodeBatch));
  if (decodeAndSample)
    define("decodeBatchAndSample", (indexes: Int32Array, samplers: unknown[]) => timed(() => decodeAndSample(indexes, samplers)));
  if (ahead)
    define("decodeBatchAndSampleAhead", (...args: unknown[]) =>
      timed(
        () => ahead(...args),
        (samples) => samples.length,
      ),
    );
  return counts;
}

type DecodeAheadCall = (
  batchLogitIndexes: Int32Array,
  samplers: unknown[],
  sequenceId: number,
  firstPosition: number,
  steps: number,
  budgetMicroseconds: number,
) => Promise<(number | string)[]>;
interface NativeAhead {
  initBatch: (size: number) => unknown;
  addToBatch: (sequenceId: number, firstPosition: number, tokens: Uint32Array, logitIndexes: Uint32Array) => unknown;
  decodeBatchAndSample: DecodeAndSample;
  removeTokenCellsFromSequence: (sequenceId: number, start: number, end: number) => boolean;
  /** The patch's (llama/addon/AddonContext.cpp): decodeBatchAndSample, then more steps of its one sequence in the same call. */
  decodeBatchAndSampleAhead?: DecodeAheadCall;
  /** The patch's: ends a run ahead at its next step. */
  stopAhead?: () => void;
}
interface QueuedDecode {
  sequenceId: number;
  firstTokenSequenceIndex: number;
  tokens: readonly number[];
  logits: readonly (boolean | undefined)[];
  tokenMeter?: unknown;
  afterBatchAction?: (sequenceStateLength: number) => unknown;
}
type LogitMapper = { psychePrepare?: () => unknown };
type DecodeTokens = (item: QueuedDecode, mapper: LogitMapper) => Promise<[number, unknown][]>;

/** Runs ahead and the steps they made past their batch's; steps taken from them, and runs whose rest was dropped. */
export interface AheadCounts {
  runs: number;
  steps: number;
  taken: number;
  dropped: number;
}

export interface DecodeAhead {
  readonly counts: AheadCounts;
  /** Drops what `sequenceId` decoded ahead and did not take: its generation is over. */
  settle(sequenceId: number): void;
}

/**
 * The longest a run ahead goes on (µs): its tokens reach the client together at its end, so a
 * model whose steps are long (the bench model's 17-30 ms on two cores) takes no step ahead, and
 * a run of short ones is a burst no one sees.
 */
export const AHEAD_BUDGET_US = 10_000;

/** node-llama-cpp's id of `sequence` in its context (the addon's sequence id): not public. */
export const sequenceIdOf = (sequence: LlamaContextSequence): number => (sequence as unknown as { _sequenceId: number })._sequenceId;

/** A sampler config with nothing that reads the tokens before it from JavaScript: no grammar, no repeat penalties. */
const freeConfig = (c: Record<string, unknown>): boolean =>
  c.grammarEvaluationState == null &&
  (c.repeatPenalty ?? 1) === 1 &&
  !c.repeatPenaltyPresencePenalty &&
  !c.repeatPenaltyFrequencyPenalty &&
  c.dryRepeatPenaltyStrength == null;
const FREE = Symbol("psyche: sampler free to run ahead");

/** node-llama-cpp's sampler class, reached by its file, its applyConfig made to mark a free config on the addon's sampler. */
async function markFreeSamplers(): Promise<boolean> {
  const url = new URL("./evaluator/LlamaContext/LlamaSampler.js", import.meta.resolve("node-llama-cpp"));
  type Sampler = { _sampler?: Record<symbol, boolean> };
  type Proto = { applyConfig?: (this: Sampler, config: Record<string, unknown>) => unknown; _psycheMarks?: boolean };
  let proto: Proto | undefined;
  try {
    proto = ((await import(url.href)) as { LlamaSampler?: { prototype: Proto } }).LlamaSampler?.prototype;
  } catch {
    return false;
  }
  const apply = proto?.applyConfig;
  if (!proto || typeof apply !== "function") return false;
  if (!proto._psycheMarks) {
    proto.applyConfig = function (config) {
      if (this._sampler) this._sampler[FREE] = freeConfig(config);
      return apply.call(this, config);
    };
    proto._psycheMarks = true;
  }
  return true;
}

/**
 * Several steps of a sequence generating alone decoded and sampled in one native call, where
 * the engine was built here with the patch (the addon's `decodeBatchAndSampleAhead`): each step
 * of a small model (or a GPU's) is shorter than its hop to libuv's pool and back and the decode
 * loop's JavaScript around it (docs/benchmarks.md, "Where a served stream's step goes"). A batch
 * of one sequence, with nothing else queued, and its sampler free of what reads earlier tokens
 * from JavaScript (a grammar, repeat penalties), is decoded and sampled as before and then on,
 * up to `maxSteps()` (under 2: none; doubling from 2 in each generation, so a reply cut short
 * wastes little), no more than `room(sequenceId)` tokens (what its generation may still make; 0:
 * none), and no longer than AHEAD_BUDGET_US, stopping at an end-of-generation token or when
 * another sequence queues (`stopAhead`). The tokens it sampled are kept; each of the sequence's
 * next decodes that asks for exactly the next of them, at its position, with the same sampler
 * still free, takes the sample that followed it at once (no batch, no hop); anything else drops
 * the rest from the sequence's cells first, as does an erase of its tokens and `settle` when its
 * generation ends. Replies are the same either way (the same sampler, its random state going on
 * as it would). A test's forced reply, whose bias changes each step, has no room. Undefined
 * where the addon has no such call (the prebuilt binary), and decoding stays as it was.
 */
export async function decodeAhead(
  context: LlamaContext,
  sequences: readonly LlamaContextSequence[],
  options: { maxSteps(): number; room(sequenceId: number): number },
): Promise<DecodeAhead | undefined> {
  const native = (context as unknown as { _ctx?: NativeAhead })._ctx;
  const target = context as unknown as { _decodeTokens?: DecodeTokens; _queuedDecodeSequenceIds?: unknown; contextSize: number };
  const ahead = native?.decodeBatchAndSampleAhead?.bind(native);
  const stop = native?.stopAhead?.bind(native);
  type Erase = (...args: unknown[]) => unknown;
  const erasing = (sequence: LlamaContextSequence) => sequence as unknown as { _eraseContextTokenRanges?: Erase };
  // Everything it relies on checked before anything is wrapped: where one is missing, nothing changes.
  if (!native || !ahead || !stop || typeof target._decodeTokens !== "function") return undefined;
  if (sequences.some((s) => typeof sequenceIdOf(s) !== "number" || typeof erasing(s)._eraseContextTokenRanges !== "function"))
    return undefined;
  if (!(await markFreeSamplers())) return undefined;
  const counts: AheadCounts = { runs: 0, steps: 0, taken: 0, dropped: 0 };
  type Run = { position: number; tokens: number[]; samples: number[]; sampler: unknown };
  const runs = new Map<number, Run>();
  const grow = new Map<number, number>();
  let batch: { sequenceId: number; end: number; tokens: number; logits: number }[] = [];
  let running = false;
  const define = (name: keyof NativeAhead, value: unknown) =>
    // The addon's methods are read-only on its prototype: defined again on the object itself.
    Object.defineProperty(native, name, { configurable: true, writable: true, value });
  const free = (sampler: unknown) => (sampler as Record<symbol, boolean> | undefined)?.[FREE] === true;
  const drop = (sequenceId: number) => {
    const run = runs.get(sequenceId);
    if (!run) return;
    runs.delete(sequenceId);
    if (run.tokens.length) counts.dropped++;
    // From the first cell not taken to the end: a cell decoded with no sample after it is there too.
    native.removeTokenCellsFromSequence(sequenceId, run.position, -1);
  };
  const [initBatch, addToBatch, decodeAndSample] = [
    native.initBatch.bind(native),
    native.addToBatch.bind(native),
    native.decodeBatchAndSample.bind(native),
  ];
  define("initBatch", (size: number) => {
    batch = [];
    return initBatch(size);
  });
  define("addToBatch", (sequenceId: number, first: number, tokens: Uint32Array, logits: Uint32Array) => {
    batch.push({ sequenceId, end: first + tokens.length, tokens: tokens.length, logits: logits.length });
    return addToBatch(sequenceId, first, tokens, logits);
  });
  define("decodeBatchAndSample", async (indexes: Int32Array, samplers: unknown[]) => {
    const [one] = batch;
    const queued = target._queuedDecodeSequenceIds;
    // A step of generation (a prompt's read goes as it did: its first token waits for nothing more).
    const step = batch.length === 1 && samplers.length === 1 && one!.tokens === 1 && one!.logits === 1;
    const most = options.maxSteps();
    if (!step || running || most < 2 || (queued instanceof Set && queued.size > 0) || !free(samplers[0]))
      return decodeAndSample(indexes, samplers);
    const { sequenceId, end } = one!;
    // Cells up to the context's last but one, where node-llama-cpp keeps one free; no more tokens than the generation may still make.
    const steps = Math.min(grow.get(sequenceId) ?? 2, most, target.contextSize - 1 - end, options.room(sequenceId));
    if (steps < 2) return decodeAndSample(indexes, samplers);
    grow.set(sequenceId, Math.min(steps * 2, most));
    running = true;
    let result: (number | string)[];
    try {
      result = await ahead(indexes, samplers, sequenceId, end, steps, AHEAD_BUDGET_US);
    } finally {
      running = false;
    }
    counts.runs++;
    counts.steps += result.length - 1;
    if (result.length > 1)
      runs.set(sequenceId, {
        position: end,
        tokens: result.slice(0, -1) as number[],
        samples: result.slice(1) as number[],
        sampler: samplers[0],
      });
    return result.slice(0, 1);
  });
  const decodeTokens = target._decodeTokens.bind(context);
  target._decodeTokens = async (item, mapper) => {
    const run = runs.get(item.sequenceId);
    if (run) {
      const next =
        item.tokens.length === 1 &&
        item.logits.length === 1 &&
        item.logits[0] === true &&
        item.firstTokenSequenceIndex === run.position &&
        item.tokens[0] === run.tokens[0];
      // Configured as a decode would: the sampler must be the run's, and still free.
      if (next && mapper.psychePrepare?.() === run.sampler && free(run.sampler)) {
        run.tokens.shift();
        run.position++;
        const sample = run.samples.shift()!;
        if (!run.tokens.length) drop(item.sequenceId);
        counts.taken++;
        for (const meter of [item.tokenMeter].flat())
          (meter as { useTokens?: (n: number, type: string) => void } | undefined)?.useTokens?.(1, "output");
        await item.afterBatchAction?.(item.firstTokenSequenceIndex + 2);
        return [[item.firstTokenSequenceIndex, sample]];
      }
      drop(item.sequenceId);
    }
    // Another sequence waits: the run under way stops at its next step.
    if (running) stop();
    return decodeTokens(item, mapper);
  };
  for (const sequence of sequences) {
    const s = erasing(sequence);
    const erase = s._eraseContextTokenRanges!.bind(sequence);
    s._eraseContextTokenRanges = (...args: unknown[]) => {
      drop(sequenceIdOf(sequence));
      return erase(...args);
    };
  }
  return {
    counts,
    settle(sequenceId) {
      drop(sequenceId);
      grow.delete(sequenceId);
    },
  };
}

/**
 * The model's tokenizer replaced by `tokenizer`: LlamaChat and the context window read
 * `model.tokenizer` at every use, so a caching one (inference/token-cache.ts) serves them all.
 */
export function replaceTokenizer<T extends Tokenizer>(model: LlamaModel, tokenizer: T): T {
  Object.defineProperty(model, "tokenizer", { value: tokenizer, configurable: true, enumerable: true });
  return tokenizer;
}

/**
 * A bias that makes `token` all but certain, the end of a turn included: TokenBias.set skips
 * end-of-generation tokens, so the logit goes into its map directly. For a test model held to a
 * fixed text while node-llama-cpp parses function calls, where a grammar may not be given
 * (inference/llama-engine.ts, `forcedReply`).
 */
export function forceToken(bias: TokenBias, token: Token, preference = 0): TokenBias {
  const map = (bias as unknown as { _biases?: unknown })._biases;
  if (!(map instanceof Map)) throw new Error("node-llama-cpp's TokenBias has no _biases map: a forced reply cannot be held to its text");
  map.set(token, 1e4 + preference * 100);
  return bias;
}

/**
 * The tokens `sequence` is decoding now, read while a token is sampled (a test's forced reply,
 * above): node-llama-cpp adds them to `contextTokens` only once the batch is done.
 */
export function watchDecoding(sequence: LlamaContextSequence): () => readonly Token[] {
  const target = sequence as unknown as {
    _decodeTokens?: (tokens: Token[], ...rest: unknown[]) => unknown;
    _psycheDecoding?: readonly Token[];
  };
  if (target._psycheDecoding === undefined) {
    const original = target._decodeTokens;
    if (typeof original !== "function") throw new Error("node-llama-cpp's sequence has no _decodeTokens: a forced reply cannot follow it");
    target._psycheDecoding = [];
    target._decodeTokens = function (this: unknown, tokens: Token[], ...rest: unknown[]) {
      target._psycheDecoding = tokens;
      return original.call(this, tokens, ...rest);
    };
  }
  return () => target._psycheDecoding ?? [];
}

/** The JSON number terminal of node-llama-cpp's grammars: not exported, reached by its file beside the entry point. */
export async function numberTerminal(): Promise<{ prototype: { allowFractional: boolean; getGrammar(): string } } | undefined> {
  const url = new URL("./utils/gbnfJson/terminals/GbnfNumber.js", import.meta.resolve("node-llama-cpp"));
  try {
    const { GbnfNumber } = (await import(url.href)) as { GbnfNumber?: { prototype: { allowFractional: boolean; getGrammar(): string } } };
    return typeof GbnfNumber?.prototype.getGrammar === "function" ? GbnfNumber : undefined;
  } catch {
    return undefined;
  }
}

/** The installed version, from the package.json above its entry point (the package exports no package.json). */
function installedVersion(): string | undefined {
  try {
    let dir = dirname(fileURLToPath(import.meta.resolve("node-llama-cpp")));
    for (let up = dirname(dir); up !== dir; dir = up, up = dirname(dir)) {
      const file = join(dir, "package.json");
      if (!existsSync(file)) continue;
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "node-llama-cpp") return pkg.version;
    }
  } catch {
    // no such package
  }
  return undefined;
}

/**
 * What of the above is missing, each said with its cost and what to do; empty when all is
 * there. `context`, where given, is checked for the field the batch gathering reads.
 */
export async function llamaInternalsProblems(context?: LlamaContext): Promise<string[]> {
  const problems: string[] = [];
  const reinstall = "run npm install again, which applies patches/node-llama-cpp+3.22.1.patch";
  const patched = await patchState();
  const version = installedVersion();
  if (version !== PINNED_VERSION)
    problems.push(
      `node-llama-cpp ${version ?? "(unknown)"} is installed, not ${PINNED_VERSION}: its internals may differ; install the version package.json pins`,
    );
  if (!patched.yields)
    problems.push(`node-llama-cpp is not patched to yield between batches (a chat may wait for the others to finish): ${reinstall}`);
  if (!patched.sampleInDecode)
    problems.push(`node-llama-cpp is not patched to sample in a decode's native call (each step makes two hops): ${reinstall}`);
  if (!patched.ordered)
    problems.push(
      `node-llama-cpp is not patched to decode a batch's sequences in order (chats at once may decode one by one): ${reinstall}`,
    );
  if (context && !(internals(context)._queuedDecodeSequenceIds instanceof Set))
    problems.push(
      "node-llama-cpp's context has no _queuedDecodeSequenceIds: batches are not gathered whole (src/inference/gather-batch.ts)",
    );
  if (!(await numberTerminal()))
    problems.push(
      "node-llama-cpp has no GbnfNumber terminal where src/inference/llama-internals.ts looks: grammars' numbers cannot be bounded",
    );
  return problems;
}

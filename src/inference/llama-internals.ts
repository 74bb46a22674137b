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

// InferenceEngine on node-llama-cpp. One context with a sequence per chat slot and one for
// dreams: chats in different slots are decoded together, in one batch (node-llama-cpp batches
// the sequences of a context); each prompt goes to the slot that already holds most of it
// (inference/slots.ts), so a conversation's next turn reads only what is new.
import { availableParallelism } from "node:os";
import {
  type ChatHistoryItem,
  type ChatModelFunctions,
  type ChatWrapper,
  type ChatWrapperGeneratedContextState,
  type Llama,
  LlamaChat,
  type LlamaChatResponseChunk,
  type LlamaContextSequence,
  type LlamaContext,
  type LlamaGrammar,
  type LlamaModel,
  LlamaText,
  HarmonyChatWrapper,
  TokenBias,
  type Token,
} from "node-llama-cpp";
import type {
  GenerateRequest,
  GenerateResult,
  InferenceEngine,
  ModelDescription,
  PromptMessage,
  ReasoningEffort,
  RenderedPrompt,
  SlotPhase,
  TextPrompt,
} from "./engine.js";
import { completeText, textTokens } from "./text-completion.js";
import { argumentProblems } from "../tools/arguments.js";
import { toGrammarSchema } from "../tools/grammar-schema.js";
import { boundGrammarNumbers } from "./bounded-numbers.js";
import { ContextOverflow } from "../errors.js";
import type { GeneratedToolCall, ToolSpec } from "../tools/types.js";
import type { ResponseFormat } from "../tools/response-format.js";
import { keptSlotScore, loadsKept, sharedPrefix, worthKeeping } from "./slots.js";
import { PromptCache } from "./prompt-cache.js";
import { describeModel } from "./model-description.js";
import { chatWrapperFor, thoughtsOffFor } from "./families/chat-wrapper.js";
import { CallHold, textCallsFor } from "./families/text-calls.js";
import { StateCosts } from "./state-costs.js";
import { BatchGather, type GatherStats } from "./gather-batch.js";
import { CoreShare } from "./core-share.js";
import { READ_TILE, tiledReadStart } from "./read-tile.js";
import {
  batchUnderWay,
  decodeAhead,
  decodeOnCallingThread,
  sequenceIdOf,
  type DecodeAhead,
  type DecodePlaces,
  forceToken,
  llamaInternalsProblems,
  onBatch,
  patchState,
  sampleInDecode,
  sampleInOneCall,
  type OneCallSampling,
  queuedSequences,
  threadsPerBatch,
  type BatchThreads,
  watchDecoding,
} from "./llama-internals.js";

export interface LlamaEngineOptions {
  llama: Llama;
  model: LlamaModel;
  modelName: string;
  /** CPU threads. */
  threads: number;
  /**
   * One thread fewer for a batch decoded while the JavaScript thread takes turns in, where the
   * threads are at least the cores (inference/core-share.ts); unset: never (createLlamaEngine
   * passes --yield-core, on by default).
   */
  yieldCore?: boolean | undefined;
  /** The cores the process may use; unset: os.availableParallelism(). Tests set it. */
  cores?: number | undefined;
  /** The longest batch, in milliseconds on every thread, that leaves a core; unset: SHORT_BATCH_MS (inference/core-share.ts). Tests set it. */
  shortBatchMs?: number | undefined;
  /** Tokens per sequence; unset: the model's trained length, bounded by the memory the machine has. */
  contextSize?: number | undefined;
  /** Tokens evaluated per batch (node-llama-cpp's default when unset). */
  batchSize?: number | undefined;
  /** Chat slots: chats generated at once. Default 4. */
  parallel?: number | undefined;
  /** The most bytes of slot state kept on disk for prompts that come back (inference/prompt-cache.ts); 0 or unset: none. */
  promptCacheBytes?: number | undefined;
  /** A batch's sequences sampled in one native call where the addon can (inference/llama-internals.ts); unset: not (createLlamaEngine passes --sample-in-one-call, on by default). */
  sampleInOneCall?: boolean | undefined;
  /** Decodes on the JavaScript thread where the addon can (inference/llama-internals.ts, decodeOnCallingThread); unset: never (createLlamaEngine passes --decode-on-main-thread). */
  decodeOnMainThread?: boolean | undefined;
  /** The most steps of a chat generating alone decoded in one native call where the addon can (inference/llama-internals.ts, decodeAhead); unset or under 2: one a call. */
  decodeAhead?: number | undefined;
  /** Where the kept states' folder is made (the system's temporary folder unless given). */
  promptCacheParent?: string | undefined;
  /**
   * Tests only, never set from configuration: the exact text the model is held to write for a
   * request (by a bias on each next token: node-llama-cpp takes no grammar beside functions,
   * and re-renders a reply part-way, as Harmony's at each `<|end|>`, where a grammar's state
   * would run on), in the family's own syntax, so that the wrapper's parsing of thoughts and
   * calls meets what a real model writes; or a GBNF grammar (`{ gbnf }`) it is held to.
   * Undefined: sampled.
   */
  forcedReply?: ((request: GenerateRequest) => string | { gbnf: string } | undefined) | undefined;
}

/** What the prompt cache did: states saved, loaded into a slot, and saves or loads that failed. */
export interface PromptCacheStats {
  saved: number;
  loaded: number;
  failed: number;
}

/**
 * The longest a sequence's next token waits for the others' before a batch is decoded: far
 * less than a step, and more than the others are behind (docs/decisions.md, "A batch waits up
 * to 2 ms").
 */
export const GATHER_MS = 2;

/** A sequence with its chat, whether its next generation must open with a function call, and whether its thinking is off. */
interface ChatSlot {
  chat: LlamaChat;
  forcing: boolean;
  /** The family's wrapper as this request asks it (thinking off, Harmony's effort); unset: as chosen. */
  variant: ChatWrapper | undefined;
  /** The conversation whose prompt the slot read last (GenerateRequest.conversation). */
  conversation?: string | undefined;
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/**
 * OpenAI messages as node-llama-cpp's chat history. An assistant message's tool calls become
 * function calls in its response, each with the result from the tool message that answers it.
 */
export function toChatHistory(messages: readonly PromptMessage[], partialResponse = ""): ChatHistoryItem[] {
  const results = new Map(messages.filter((m) => m.role === "tool" && m.toolCallId).map((m) => [m.toolCallId!, m.content]));
  const history: ChatHistoryItem[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "system":
        history.push({ type: "system", text: m.content });
        break;
      case "user":
        history.push({ type: "user", text: m.content });
        break;
      case "assistant": {
        const calls = (m.toolCalls ?? []).map((c) => ({
          type: "functionCall" as const,
          name: c.name,
          params: parseJson(c.arguments),
          result: results.has(c.id) ? parseJson(results.get(c.id)!) : "(no result)",
        }));
        history.push({ type: "model", response: [...(m.content ? [m.content] : []), ...calls] });
        break;
      }
      case "tool":
        break; // carried by the call it answers
      default:
        return m.role satisfies never;
    }
  }
  // After a call's results the model goes on in the same response, as node-llama-cpp's own
  // chat session does: a new one would open a second, empty assistant turn in the family's
  // template (Qwen's "<|im_start|>assistant\n<|im_end|>") before the reply.
  const last = history.at(-1);
  const lastPart = last?.type === "model" ? last.response.at(-1) : undefined;
  if (last?.type === "model" && typeof lastPart === "object" && lastPart.type === "functionCall") {
    if (partialResponse) last.response.push(partialResponse);
  } else history.push({ type: "model", response: partialResponse ? [partialResponse] : [] });
  return history;
}

/**
 * Tokens read per step of an interruptible prompt (dreams): a chat that wakes a dream waits for
 * at most one step, and a dream's prompt read a little slower is waited on by no one
 * (docs/decisions.md, "A dream's prompt is read 4 tokens a step").
 */
const PROMPT_CHUNK = 4;

/**
 * Whether a slot of this model can forget its last few tokens and read them again: not a
 * recurrent or hybrid model's, whose state cannot lose a suffix (node-llama-cpp would read the
 * whole prompt again), nor one whose sliding window is shorter than a tile.
 */
const stepsBack = (model: LlamaModel): boolean => {
  const insights = model.fileInsights;
  return !insights.isRecurrent && !insights.isHybrid && !(insights.swaSize !== undefined && insights.swaSize <= READ_TILE);
};

/** A request's prompt as this engine renders it: its tokens, and what generation needs of it. */
interface LlamaPrompt extends RenderedPrompt {
  readonly tokens: Token[];
  readonly history: ChatHistoryItem[];
  readonly offered: ReturnType<typeof offeredFunctions>;
}

export class LlamaEngine implements InferenceEngine {
  readonly modelName: string;
  /** Chat slots; the context's sequences are these and one for reveries. */
  readonly slots: number;
  private readonly chatWrapper: ChatWrapper;
  /** The wrapper with the family's thinking switched off, where it has a switch. */
  private readonly thoughtsOff: ChatWrapper | undefined;
  /** Where the family's calls are read off the text (Qwen3-Coder): the syntax, and the wrapper the prompt is rendered with then. */
  private readonly textCalls: ReturnType<typeof textCallsFor>;
  /** Harmony's wrapper at each reasoning effort asked for, made once. */
  private readonly efforts = new Map<ReasoningEffort, ChatWrapper>();
  /** Slot i's sequence: the chats' first (context sequences 1..slots, side by side), the reverie's last (sequence 0). */
  private readonly sequences: ChatSlot[];
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Generations under way, each in its sequence: what a batch waits for (inference/gather-batch.ts). */
  private generating = 0;
  /** Chats making their slots ready (prepare): what a write before their first token waits behind, as a generation is. */
  private preparing = 0;
  private readonly cache: PromptCache | undefined;
  readonly promptCache: PromptCacheStats = { saved: 0, loaded: 0, failed: 0 };
  /** What reading and loading cost here: when a kept prompt is loaded rather than read. */
  readonly stateCosts = new StateCosts();
  /** A batch's sequences sampled in one native call (an engine built here; inference/llama-internals.ts): its counts; undefined where not. */
  oneCallSampling: OneCallSampling | undefined;
  /** Whether a batch's samples are taken in its decode's native call (inference/llama-internals.ts, sampleInDecode). */
  samplesInDecode = false;
  /** Where the decodes were made, on the JavaScript thread or in libuv's pool, where asked for and the addon can; undefined where not. */
  decodePlaces: DecodePlaces | undefined;
  /**
   * Whether decodes are made on the JavaScript thread, where asked for at creation and the addon
   * can; not to change once decodes have begun (inference/llama-internals.ts, decodeOnCallingThread,
   * says why). Tests change it, knowing what that costs.
   */
  mainThreadDecode: boolean;
  /** Several steps of a chat generating alone in one native call (inference/llama-internals.ts, decodeAhead): its counts; undefined where not. */
  ahead: DecodeAhead | undefined;
  /** The most steps a call where it can (--decode-ahead); under 2: one a call. Tests change it. */
  aheadSteps: number;
  /** The sequences whose generation may decode ahead, with the tokens each may still make: not a forced reply's. */
  private readonly aheadRoom = new Map<number, () => number>();
  /** On the CPU with flash attention (llama.cpp's choice, on there): the batch it reads in tiles (inference/read-tile.ts). */
  private readonly readTile: number | undefined;
  /** Short reads stepped back to make a tile, since the engine started. */
  tiledReads = 0;
  /** The core left to the JavaScript thread while it takes turns in (inference/core-share.ts), where asked for. */
  private readonly coreShare: CoreShare | undefined;
  /** Batches decoded with the threads asked for and with one fewer (threadsPerBatch); undefined where not asked for or unavailable. */
  batchThreads: BatchThreads | undefined;

  private constructor(
    private readonly options: LlamaEngineOptions,
    private readonly context: LlamaContext,
    private readonly gather: BatchGather,
  ) {
    this.modelName = options.modelName;
    this.mainThreadDecode = options.decodeOnMainThread ?? false;
    this.aheadSteps = options.decodeAhead ?? 0;
    this.slots = context.totalSequences - 1;
    this.coreShare = options.yieldCore ? new CoreShare(options.cores ?? availableParallelism(), options.shortBatchMs) : undefined;
    // Resolved once per model: auto-detection is costly blocking CPU (docs/benchmarks.md, "Engine set-up").
    this.chatWrapper = chatWrapperFor(options.model);
    this.thoughtsOff = thoughtsOffFor(this.chatWrapper, options.model);
    this.textCalls = textCallsFor(this.chatWrapper);
    const slot = (): ChatSlot => {
      const s: ChatSlot = { chat: undefined as unknown as LlamaChat, forcing: false, variant: undefined };
      const wrapper = () => s.variant ?? this.chatWrapper;
      s.chat = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: forcingWrapper(wrapper, () => s.forcing) });
      return s;
    };
    // The reverie's sequence first (id 0), then the chats' in order, so neighbouring chat slots
    // are neighbouring sequence ids (inference/scheduler.ts places chats side by side for that).
    const reverie = slot();
    this.sequences = [...Array.from({ length: this.slots }, slot), reverie];
    this.readTile = options.llama.gpu === false && context.flashAttention !== false && stepsBack(options.model) ? READ_TILE : undefined;
    const bytes = options.promptCacheBytes ?? 0;
    this.cache = bytes > 0 ? new PromptCache(bytes, options.promptCacheParent) : undefined;
  }

  static async create(options: LlamaEngineOptions): Promise<LlamaEngine> {
    await boundGrammarNumbers();
    // The schedule is the context's and counts the engine's generations: both are made here.
    const made: { context?: LlamaContext; engine?: LlamaEngine } = {};
    const patched = (await patchState()).ordered;
    const gather = new BatchGather({
      queued: () => (made.context ? queuedSequences(made.context, patched) : undefined),
      generating: () => made.engine?.generating ?? 0,
      underWay: () => (made.context ? batchUnderWay(made.context) : false),
      maxWaitMs: GATHER_MS,
    });
    const context = await options.model.createContext({
      contextSize: options.contextSize ?? { max: options.model.trainContextSize },
      // The chat slots and one for dreams, so a dream never evicts a conversation's cache.
      sequences: (options.parallel ?? 4) + 1,
      threads: options.threads,
      // An abort takes effect between batches: smaller ones let a chat wake a dream that is
      // still reading its prompt sooner.
      ...(options.batchSize ? { batchSize: options.batchSize } : {}),
      batching: { dispatchSchedule: gather.schedule },
    });
    made.context = context;
    // Told by the patched decode loop as it builds each batch.
    let batchSize = 0;
    onBatch(context, (n) => {
      batchSize = n;
      gather.decoding(n);
    });
    made.engine = new LlamaEngine(options, context, gather);
    // Only where asked for, so that the shipped way adds nothing to a step; before
    // sampleInDecode, whose counts wrap what this answers.
    const engine = made.engine;
    if (engine.mainThreadDecode) engine.decodePlaces = decodeOnCallingThread(context, () => engine.mainThreadDecode);
    const share = engine.coreShare;
    if (share)
      engine.batchThreads = threadsPerBatch(context, {
        threadsFor: (asked, tokens) => share.threadsFor(asked, engine.preparing, tokens),
        decoded: (tokens, ms) => share.decoded(tokens, ms),
      });
    if (options.sampleInOneCall) {
      made.engine.oneCallSampling = sampleInOneCall(context, () => batchSize);
      if (made.engine.oneCallSampling) made.engine.samplesInDecode = await sampleInDecode(context, made.engine.oneCallSampling);
    }
    // Wraps the decode in the patched loop that sampleInDecode turns on: needs it; and its
    // calls hop to libuv's pool, which decodes on the main thread must never mix with.
    if (engine.samplesInDecode && !engine.mainThreadDecode && engine.aheadSteps >= 2)
      engine.ahead = await decodeAhead(
        context,
        engine.sequences.map((s) => s.chat.sequence),
        { maxSteps: () => engine.aheadSteps, room: (id) => engine.aheadRoom.get(id)?.() ?? 0 },
      );
    return made.engine;
  }

  /**
   * A turn is being taken in by this process's JavaScript thread (read, checked, stored) until
   * the returned call: batches meanwhile leave it a core (inference/core-share.ts).
   */
  takingIn(): () => void {
    return this.coreShare?.taking() ?? (() => undefined);
  }

  /** What is missing of node-llama-cpp's internals this engine relies on (inference/llama-internals.ts); empty when all is there. */
  internalsProblems(): Promise<string[]> {
    return llamaInternalsProblems(this.context);
  }

  /** Whether the model has a thinking channel: its chat wrapper marks thoughts (Qwen3's, DeepSeek's, Gemma 4's, Harmony's). */
  get thinks(): boolean {
    return this.chatWrapper.settings.segments?.thought != null;
  }

  private description: ModelDescription | undefined;

  /** The model as clients' model lists describe it (Ollama's /api/show); read once: an autocomplete's every suffix asks. */
  describe(): ModelDescription {
    return (this.description ??= describeModel(this.options.model, this.contextSize, this.thinks));
  }

  get batching(): Readonly<GatherStats> {
    return this.gather.stats;
  }

  /** Tokens of context one sequence (one slot, one conversation) has. */
  get contextSize(): number {
    return this.context.contextSize;
  }

  get tokenizer() {
    return this.options.model.tokenizer;
  }

  countTokens(text: string): number {
    // model.tokenizer remembers long texts (inference/token-cache.ts); model.tokenize does not.
    return this.options.model.tokenizer(text).length;
  }

  /** Counts the prompt's tokens as the chat wrapper renders it. */
  countPromptTokens(history: ChatHistoryItem[]): number {
    return this.promptTokens(history).length;
  }

  /**
   * The wrapper a request's prompt is rendered with: the family's switch for thinking off (a
   * budget of 0), Harmony's own reasoning effort line (gpt-oss), or the model's as chosen.
   */
  private wrapperFor(request: Pick<GenerateRequest, "thoughtBudget" | "reasoningEffort">): ChatWrapper | undefined {
    if (request.thoughtBudget === 0 && this.thoughtsOff) return this.thoughtsOff;
    const effort = request.reasoningEffort;
    if (!effort || !(this.chatWrapper instanceof HarmonyChatWrapper)) return undefined;
    let variant = this.efforts.get(effort);
    if (!variant) this.efforts.set(effort, (variant = withEffort(this.chatWrapper, effort)));
    return variant;
  }

  /** The prompt's tokens as the chat wrapper renders it (with the functions offered, where given). */
  private promptTokens(history: ChatHistoryItem[], functions?: ChatModelFunctions, wrapper = this.chatWrapper): Token[] {
    const { contextText } = wrapper.generateContextState({
      chatHistory: history,
      ...(functions ? { availableFunctions: functions } : {}),
    });
    return contextText.tokenize(this.options.model.tokenizer);
  }

  /**
   * Reads a prompt into the chat's sequence a few tokens at a time, stopping between chunks
   * when `signal` aborts. node-llama-cpp checks its signal only between generated tokens: a
   * dream woken while reading a long prompt would otherwise finish reading it first (hundreds
   * of ms on a CPU). generateResponse then finds the prefix evaluated and reads only the rest.
   */
  private async readPrompt(chat: LlamaChat, history: ChatHistoryItem[], signal: AbortSignal): Promise<void> {
    const { contextText } = this.chatWrapper.generateContextState({ chatHistory: history });
    const tokens = contextText.tokenize(this.options.model.tokenizer);
    // The last few tokens are left to generateResponse, which renders the reply's opening after them.
    const prefix = tokens.slice(0, Math.max(0, tokens.length - 4));
    const sequence = chat.sequence;
    await sequence.adaptStateToTokens(prefix, false);
    for (let at = sequence.nextTokenIndex; at < prefix.length && !signal.aborted; at = sequence.nextTokenIndex) {
      await sequence.evaluateWithoutGeneratingNewTokens(prefix.slice(at, at + PROMPT_CHUNK));
    }
  }

  cachedTokens(slot: number): readonly number[] {
    return this.sequences[slot]!.chat.sequence.contextTokens;
  }

  /** The prompt as the model will read it, functions included: what a slot may already hold. */
  render(request: GenerateRequest): LlamaPrompt {
    if (request.text)
      return { tokens: textTokens(this.options.model, request.text), history: [], offered: { functions: undefined, forced: false } };
    const history = toChatHistory(request.messages, request.partialResponse);
    const offered = offeredFunctions(request);
    const wrapper = offered.functions && !offered.forced ? (this.textCalls?.wrapper ?? this.wrapperFor(request)) : this.wrapperFor(request);
    return { tokens: this.promptTokens(history, offered.functions, wrapper), history, offered };
  }

  /** A slot's worth when what it would discard can be kept on disk and kept prompts loaded (inference/slots.ts). */
  slotWorth(prompt: RenderedPrompt): ((cached: readonly number[]) => number) | undefined {
    const cache = this.cache;
    if (!cache) return undefined;
    const best = cache.best(prompt.tokens);
    const minGain = best ? this.stateCosts.minLoadGain(best.entry.bytes) : undefined;
    return (cached) => keptSlotScore(cached, prompt.tokens, best?.shared ?? 0, (discarded, whole) => this.keeps(discarded, whole), minGain);
  }

  async prepare(slot: number, prompt: RenderedPrompt, conversation: string | undefined, phase: (phase: SlotPhase) => void): Promise<void> {
    const s = this.sequences[slot]!;
    this.preparing++;
    try {
      await this.keepAndLoad(s, prompt.tokens, conversation, phase);
    } finally {
      this.preparing--;
    }
    s.conversation = conversation;
  }

  generateIn(slot: number, prompt: RenderedPrompt, request: GenerateRequest, phase: (phase: SlotPhase) => void): Promise<GenerateResult> {
    const s = this.sequences[slot]!;
    const p = prompt as LlamaPrompt;
    const held = Math.min(sharedPrefix(s.chat.sequence.contextTokens, p.tokens), p.tokens.length);
    const run = request.text
      ? this.completeNow(s, request.text, request, p.tokens.length, held, phase)
      : this.generateNow(s, request, p.history, p.offered, held, p.tokens.length, phase);
    const settled = run.catch(() => undefined);
    this.inFlight.add(settled);
    void settled.finally(() => this.inFlight.delete(settled));
    return run;
  }

  /**
   * Before `prompt` is read into `slot`: what it would discard is kept on disk, and a kept
   * prompt that holds more of it than the slot does is loaded in its place. A save or load that
   * fails costs only the reading (a failed load leaves the slot empty). Nothing is written out
   * where the slot last read this prompt's own conversation: what the prompt does not share is
   * that conversation's older rendering (the memories recalled for its last turn, a reply read
   * back as text), which no prompt asks for again.
   */
  private async keepAndLoad(
    slot: ChatSlot,
    prompt: readonly number[],
    conversation: string | undefined,
    phase: (phase: SlotPhase) => void,
  ): Promise<void> {
    if (!this.cache) return;
    const sequence = slot.chat.sequence;
    const cached = sequence.contextTokens;
    const shared = Math.min(sharedPrefix(cached, prompt), prompt.length);
    const best = this.cache.best(prompt);
    const load = best && loadsKept(best.shared, shared, this.stateCosts.minLoadGain(best.entry.bytes)) ? best.entry : undefined;
    const discarded = load ? cached.length : cached.length - shared;
    const superseded = conversation !== undefined && slot.conversation === conversation;
    // Timed only with nothing else under way: beside other chats a write or load waits for their step.
    const others = this.generating + this.preparing - 1;
    const timed = others === 0;
    if (!superseded && this.keeps(discarded, cached.length, others)) {
      // Pinned: the save may make room by evicting, and not the prompt about to be loaded.
      if (load) load.pinned++;
      phase("saving");
      const whole = cached.length;
      const startedAt = performance.now();
      const saved = await this.cache.save(sequence).catch(() => undefined);
      if (load) load.pinned--;
      if (saved === undefined) this.promptCache.failed++;
      else if (saved) {
        this.promptCache.saved++;
        if (timed) this.stateCosts.noteSave(whole * (this.cache.bytesPerToken ?? 0), performance.now() - startedAt);
      }
    }
    if (load) {
      phase("loading");
      const startedAt = performance.now();
      const loaded = await this.cache.load(sequence, load).then(
        () => true,
        () => false,
      );
      this.promptCache[loaded ? "loaded" : "failed"]++;
      if (loaded && timed) this.stateCosts.noteLoad(load.bytes, performance.now() - startedAt);
    }
  }

  /** Whether a slot's state of `whole` tokens is written out before `discarded` of them are thrown away. */
  /**
   * `others`: the chats under way beside this one, generating or making their slots ready (a
   * write of theirs or a read of their prompt): chats that arrive together would otherwise each
   * write before its first token, one after another (docs/benchmarks.md, "A turn begun while it
   * is stored").
   */
  private keeps(discarded: number, whole: number, others = this.generating + this.preparing): boolean {
    return this.cache !== undefined && worthKeeping(discarded, whole, others) && this.cache.fits(whole);
  }

  private async generateNow(
    slot: ChatSlot,
    request: GenerateRequest,
    history: ChatHistoryItem[],
    { functions, forced }: ReturnType<typeof offeredFunctions>,
    held: number,
    /** The prompt's tokens, functions included. */
    whole: number,
    phase: (phase: SlotPhase) => void,
  ): Promise<GenerateResult> {
    phase("reading");
    const promptTokens = this.countPromptTokens(history);
    // Counted with the functions' rendering, which the prompt count leaves out.
    const cachedTokens = Math.min(held, promptTokens);
    // Refused before the model reads it, counted as the model reads it: the functions'
    // documentation is in `whole`, and a client's tools (Hermes's) can take more of a small
    // context than its messages. Past the context, node-llama-cpp shifts the history mid-reply
    // or fails ("did not return a history that fits"); it keeps one token free. The reply gets
    // what the context leaves.
    const reads = Math.max(whole, promptTokens);
    if (reads + 1 >= this.contextSize) throw new ContextOverflow(reads, this.contextSize);
    const maxTokens = Math.min(request.maxTokens, this.contextSize - reads - 1);
    const cancelled: GenerateResult = {
      text: "",
      finishReason: "cancelled",
      promptTokens,
      cachedTokens,
      completionTokens: 0,
      toolCalls: [],
    };
    if (request.signal?.aborted) return cancelled;
    this.generating++;
    try {
      let toRead = whole - held;
      // A dream's prompt is read a few tokens a step (readPrompt): no tile to make.
      if (request.sequence === "dream" && request.signal) {
        await this.readPrompt(slot.chat, history, request.signal);
        if (request.signal.aborted) return cancelled;
      } else toRead = await this.readInTiles(slot, held, whole);
      return await this.generateWith(
        slot,
        request,
        history,
        { functions, forced },
        { promptTokens, cachedTokens, maxTokens, toRead },
        phase,
      );
    } finally {
      this.generating--;
    }
  }

  /** A text completion in `slot` (inference/text-completion.ts), refused before reading when it does not fit. */
  private async completeNow(
    slot: ChatSlot,
    text: TextPrompt,
    request: GenerateRequest,
    promptTokens: number,
    held: number,
    phase: (phase: SlotPhase) => void,
  ): Promise<GenerateResult> {
    phase("reading");
    if (promptTokens + 1 >= this.contextSize) throw new ContextOverflow(promptTokens, this.contextSize);
    const maxTokens = Math.min(request.maxTokens, this.contextSize - promptTokens - 1);
    this.generating++;
    const sequenceId = sequenceIdOf(slot.chat.sequence);
    try {
      await this.readInTiles(slot, held, promptTokens);
      // node-llama-cpp's completion counts its tokens itself: the reply's limit is as close as is known.
      this.aheadRoom.set(sequenceId, () => maxTokens);
      return await completeText(text, request, {
        model: this.options.model,
        sequence: slot.chat.sequence,
        maxTokens,
        sampling: this.sampling(request),
        phase,
        promptTokens,
        cachedTokens: held,
      });
    } finally {
      this.aheadRoom.delete(sequenceId);
      this.ahead?.settle(sequenceId);
      this.generating--;
    }
  }

  /**
   * Steps a short read back into what the slot holds, so that the model reads one tile
   * (inference/read-tile.ts): the slot forgets its last few held tokens, and the generation
   * reads them again with the new ones. Returns the tokens the generation will read. The
   * reply's usage still counts the held tokens as cached: they were.
   */
  private async readInTiles(slot: ChatSlot, held: number, whole: number): Promise<number> {
    const from = this.readTile ? tiledReadStart(held, whole - held, this.readTile) : held;
    const sequence = slot.chat.sequence;
    if (from < held) {
      await sequence.eraseContextTokenRanges([{ start: from, end: sequence.nextTokenIndex }]);
      this.tiledReads++;
    }
    return whole - from;
  }

  /** The generation itself, in `slot`, once the prompt is known to fit. */
  private async generateWith(
    slot: ChatSlot,
    request: GenerateRequest,
    history: ChatHistoryItem[],
    { functions, forced }: ReturnType<typeof offeredFunctions>,
    { promptTokens, cachedTokens, maxTokens, toRead }: { promptTokens: number; cachedTokens: number; maxTokens: number; toRead: number },
    phase: (phase: SlotPhase) => void,
  ): Promise<GenerateResult> {
    let completionTokens = 0;
    // A chat's prompt read with nothing else generating is a measure of reading (inference/state-costs.ts).
    const startedAt = performance.now();
    const timed = request.sequence === "dream" || this.generating > 1;
    let read = false;
    let unreported = 0;
    let text = "";
    // A continuation (a retried turn, a resumed dream) keeps its leading whitespace: it joins the text before it.
    const continuation = Boolean(request.partialResponse);
    let relayed = false;
    let reasoning = "";
    let reasoningTokens = 0;
    // A forced call ends when its arguments are a whole JSON object: a model that does not
    // write the wrapper's closing syntax after them (a random one) would otherwise go on.
    const calls: { name: string; params: string; complete: boolean }[] = [];
    const callDone = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, callDone.signal]) : callDone.signal;
    const forcedText = this.options.forcedReply?.(request);
    // The grammar ends with the JSON, but a model may pad it with whitespace to max_tokens: a whole value ends the reply.
    const grammar =
      forcedText === undefined && !functions && request.responseFormat ? await this.grammarFor(request.responseFormat) : undefined;
    const budget = request.thoughtBudget;
    // Off where the family has a switch (Qwen3's empty thought); elsewhere a thought of one token,
    // closed at once: a budget of 0 would leave node-llama-cpp reading a thought's tags as text.
    const thoughtsOff = budget === 0 && this.thoughtsOff !== undefined;
    const thoughtTokens = budget === undefined || thoughtsOff ? undefined : Math.max(1, budget);
    // A family whose calls are read off the text (families/text-calls.ts): with tools offered
    // and the choice the model's, the reply is held back from a call's opening.
    const reading = functions && !forced ? this.textCalls : undefined;
    const hold = reading ? new CallHold(reading.syntax) : undefined;
    slot.forcing = forced;
    slot.variant = reading?.wrapper ?? this.wrapperFor(request);
    const sequenceId = sequenceIdOf(slot.chat.sequence);
    // A forced reply's bias changes each step: its samples cannot be taken ahead.
    if (forcedText === undefined) this.aheadRoom.set(sequenceId, () => maxTokens - completionTokens - reasoningTokens);
    try {
      const common = {
        ...this.sampling(request),
        ...(typeof forcedText === "string"
          ? { tokenBias: this.forcedBias(slot.chat.sequence, this.promptTokens(history, functions, slot.variant), forcedText) }
          : {}),
        maxTokens,
        temperature: request.temperature ?? 1,
        topP: request.topP ?? undefined,
        topK: request.topK || undefined,
        seed: request.seed ?? undefined,
        customStopTriggers: request.stop?.length ? [...request.stop] : undefined,
        signal,
        stopOnAbortSignal: true,
        ...(thoughtTokens !== undefined ? { budgets: { thoughtTokens } } : {}),
        onToken: (tokens: readonly unknown[]) => {
          if (!read) {
            read = true;
            phase("generating");
            if (!timed && this.generating === 1) this.stateCosts.noteRead(toRead, performance.now() - startedAt);
          }
          completionTokens += tokens.length;
          unreported += tokens.length;
        },
        // The family's chat wrapper marks a thought (Qwen3's and DeepSeek's <think>, Gemma 4's
        // and Harmony's thought channels) as a segment: it is the reasoning, never the text.
        onResponseChunk: (chunk: LlamaChatResponseChunk) => {
          if (chunk.type === "segment" && chunk.segmentType === "thought") {
            // node-llama-cpp's onToken reports none of a segment's tokens: the thought's are counted from its text.
            const tokens = chunk.text ? this.countTokens(chunk.text) : 0;
            reasoning += chunk.text;
            reasoningTokens += tokens;
            if (chunk.text) request.onReasoning?.(chunk.text, tokens);
          } else {
            text += chunk.text;
            if (grammar && wholeJsonValue(text)) callDone.abort();
            // The reply's leading whitespace (Qwen3's "\n\n" after its thought, before an answer
            // or a call) is held back: relayed with what follows it, dropped when nothing does.
            if (!text.trim() && !continuation) return;
            const piece = relayed || continuation ? chunk.text : text.trimStart();
            relayed = true;
            const out = hold ? hold.relay(piece) : piece;
            if (out || unreported) request.onText?.(out, unreported);
          }
          unreported = 0;
        },
      };
      const generation = functions
        ? slot.chat.generateResponse(history, {
            ...common,
            functions,
            ...(request.parallelToolCalls === false ? { maxParallelFunctionCalls: 1 } : {}),
            onFunctionCallParamsChunk: (c) => {
              const call = (calls[c.callIndex] ??= { name: c.functionName, params: "", complete: false });
              call.params += c.paramsChunk;
              if (forced && !call.complete && wholeJsonObject(call.params)) {
                call.complete = true;
                callDone.abort();
              }
            },
          })
        : slot.chat.generateResponse(history, {
            ...common,
            ...(grammar ? { grammar } : typeof forcedText === "object" ? { grammar: await this.forcedGrammar(forcedText) } : {}),
          });
      // Stopping a forced call once its arguments are whole throws node-llama-cpp's abort
      // (nothing was generated as text); the call is what was wanted.
      const result = await generation.catch((err: unknown) => {
        if (callDone.signal.aborted && (calls.some((c) => c.complete) || grammar)) return undefined;
        throw err;
      });
      let made = calls.some((c) => c.complete)
        ? calls.filter((c) => c.complete).map((c) => ({ name: c.name, arguments: JSON.stringify(JSON.parse(c.params)) }))
        : (result?.functionCalls ?? []).map((c) => ({ name: c.functionName, arguments: JSON.stringify(c.params ?? {}) }));
      let reply = continuation ? text : text.trimStart();
      if (hold?.held) {
        // Whole calls are calls (the text before them stays text); anything else was text after all.
        const read = reading!.syntax.parse(hold.held, request.tools ?? []);
        if (read) [made, reply] = [request.parallelToolCalls === false ? read.slice(0, 1) : read, hold.text];
        else request.onText?.(hold.held, 0);
      }
      const toolCalls: GeneratedToolCall[] = made.map((c) => ({ ...c, problems: argumentProblems(request.tools ?? [], c) }));
      // node-llama-cpp reports no tokens while it writes a call: count the call's own.
      if (toolCalls.length && completionTokens === 0)
        completionTokens = calls.reduce((n, c) => n + this.countTokens(`${c.name}${c.params}`), 0);
      completionTokens += reasoningTokens;
      const reason = result?.metadata.stopReason;
      // Stopped by max_tokens, the model made exactly that many tokens; node-llama-cpp drops
      // (and never reports) a last token it was holding back as the possible start of a stop
      // sequence, so its count can fall one short.
      if (reason === "maxTokens" && toolCalls.length === 0) completionTokens = Math.max(completionTokens, maxTokens);
      const finishReason = toolCalls.length
        ? "tool_calls"
        : reason === "maxTokens"
          ? "length"
          : request.signal?.aborted || (reason === "abort" && !callDone.signal.aborted)
            ? "cancelled"
            : "stop";
      return {
        text: reply,
        reasoning,
        reasoningTokens,
        finishReason,
        promptTokens,
        cachedTokens,
        completionTokens,
        toolCalls,
      };
    } finally {
      this.aheadRoom.delete(sequenceId);
      this.ahead?.settle(sequenceId);
      slot.forcing = false;
      slot.variant = undefined;
    }
  }

  /** OpenAI's presence and frequency penalties and logit_bias, as node-llama-cpp takes them. */
  private sampling(request: GenerateRequest): {
    repeatPenalty?: { lastTokens: number; presencePenalty: number; frequencyPenalty: number };
    tokenBias?: TokenBias;
  } {
    const out: ReturnType<LlamaEngine["sampling"]> = {};
    if (request.presencePenalty || request.frequencyPenalty) {
      // OpenAI counts over the whole reply; llama.cpp over a window: make it the reply's length.
      out.repeatPenalty = {
        lastTokens: Math.max(64, request.maxTokens),
        presencePenalty: request.presencePenalty ?? 0,
        frequencyPenalty: request.frequencyPenalty ?? 0,
      };
    }
    const biases = Object.entries(request.logitBias ?? {});
    if (biases.length) {
      // An id past the vocabulary would index past llama.cpp's logits: refused here.
      const vocabulary = this.options.model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length;
      const bias = new TokenBias(this.options.model.tokenizer);
      for (const [id, value] of biases) {
        const token = Number(id);
        if (vocabulary === undefined || token >= vocabulary)
          throw new Error(`logit_bias names token ${id}, which is not in the model's vocabulary (${vocabulary ?? "unknown"} tokens)`);
        bias.set(token as Token, value <= -100 ? "never" : { logit: value });
      }
      out.tokenBias = bias;
    }
    return out;
  }

  /**
   * A bias that holds the model to `text` and then its end of turn, one token a step. It reads
   * what the reply holds so far off the slot's sequence, the batch being decoded included:
   * node-llama-cpp writes part of a call itself (the wrapper's prefix, re-rendered, and the text
   * between a function's name and its arguments) without sampling it, and a bias that counted
   * its own steps would fall out of step there.
   */
  private forcedBias(sequence: LlamaContextSequence, promptTokens: readonly Token[], text: string): () => TokenBias {
    const { model } = this.options;
    const end = model.tokens.eot ?? model.tokens.eos;
    const prompt = model.detokenize(promptTokens, true);
    const decoding = watchDecoding(sequence);
    // Each token's text mid-reply (after a letter: SentencePiece drops a first token's space), made once.
    const midText = model.tokenize("a", false, "trimLeadingSpace");
    let texts: Map<string, Token[]> | undefined;
    const byText = () => {
      if (texts) return texts;
      texts = new Map();
      const size = model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? 0;
      for (let id = 0; id < size; id++) {
        const piece = model.detokenize([id as Token], true, midText);
        if (piece) texts.set(piece, [...(texts.get(piece) ?? []), id as Token]);
      }
      return texts;
    };
    return () => {
      const bias = new TokenBias(model.tokenizer);
      const written = model.detokenize([...sequence.contextTokens, ...decoding()], true);
      const at = written.startsWith(prompt) ? alignedEnd(text, written.slice(prompt.length)) : undefined;
      const rest = at === undefined ? "" : text.slice(at);
      if (!rest) return end === null ? bias : forceToken(bias, end);
      // The rest's own first token most, then every token whose text begins the rest, the
      // longer the more: where a grammar of node-llama-cpp's stops short of the first ('"}}\n'
      // past a call's arguments), or a SentencePiece tokenizer would open a word with a space
      // the text has not, a shorter one goes on.
      const pieces = byText();
      for (let n = Math.min(rest.length, 24); n >= 1; n--)
        for (const token of pieces.get(rest.slice(0, n)) ?? []) forceToken(bias, token, n);
      const first = model.tokenize(rest, true)[0];
      return first !== undefined && rest.startsWith(model.detokenize([first], true, midText)) ? forceToken(bias, first, 100) : bias;
    };
  }

  /** The GBNF grammar a test holds the model to. */
  private forcedGrammar({ gbnf }: { gbnf: string }): Promise<LlamaGrammar> {
    return this.options.llama.createGrammar({ grammar: gbnf });
  }

  /** The grammar for a response format, made once per schema (making one costs milliseconds). */
  private grammarFor(format: ResponseFormat): Promise<LlamaGrammar> {
    const key = JSON.stringify(format.type === "json_object" ? format.type : format.schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar =
        format.type === "json_object"
          ? this.options.llama.getGrammarFor("json")
          : this.options.llama.createGrammarForJsonSchema(
              toGrammarSchema(format.schema) as Parameters<Llama["createGrammarForJsonSchema"]>[0],
            );
      if (this.grammars.size > 100) this.grammars.clear();
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.inFlight);
    for (const slot of this.sequences) slot.chat.dispose();
    this.cache?.dispose();
    await this.context.dispose();
    await this.options.model.dispose();
  }
}

/** The functions offered for a request, and whether one must be called. */
export function offeredFunctions(request: Pick<GenerateRequest, "tools" | "toolChoice">): {
  functions: ChatModelFunctions | undefined;
  forced: boolean;
} {
  const choice = request.tools?.length ? (request.toolChoice ?? "auto") : "none";
  if (choice === "none") return { functions: undefined, forced: false };
  const tools: readonly ToolSpec[] = typeof choice === "object" ? request.tools!.filter((t) => t.name === choice.name) : request.tools!;
  if (tools.length === 0) throw new Error(`tool_choice names "${(choice as { name: string }).name}", which is not among the tools`);
  const functions: ChatModelFunctions = Object.fromEntries(
    tools.map((t) => [t.name, { ...(t.description ? { description: t.description } : {}), params: toGrammarSchema(t.parameters) }]),
  );
  return { functions, forced: choice !== "auto" };
}

/**
 * Where `written` ends in `text`, when it is `text`'s beginning but for whitespace: node-llama-cpp
 * renders a call it has parsed again its own way (`{"city":"Paris"}` for `{"city": "Paris"}`).
 * Undefined when they differ in anything else.
 */
export function alignedEnd(text: string, written: string): number | undefined {
  let i = 0;
  let j = 0;
  while (j < written.length) {
    if (i < text.length && text[i] === written[j]) {
      i++;
      j++;
    } else if (/\s/.test(written[j]!)) j++;
    else if (i < text.length && /\s/.test(text[i]!)) i++;
    else return undefined;
  }
  return i;
}

/** True when `text` is one complete JSON value (a reply held to a response format). */
export function wholeJsonValue(text: string): boolean {
  const trimmed = text.trim();
  // A number or a word could still go on; an object, an array or a string has ended. Tested
  // first: this runs at every chunk of a structured reply, and parsing is the costly part.
  if (!/[}\]"]$/.test(trimmed)) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

/** True when `text` is one complete JSON object. */
export function wholeJsonObject(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return false;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * The model's chat wrapper, except that while `forcing()` is true its context state opens the
 * reply with the wrapper's function-call prefix: node-llama-cpp then grammar-constrains the
 * function name and its JSON arguments, so even a random model makes a valid call (prefilling
 * the prefix as text did not work; test/engine/tool-calls.test.ts holds it to this).
 */
function forcingWrapper(current: () => ChatWrapper, forcing: () => boolean): ChatWrapper {
  const wrapper = Object.create(current()) as ChatWrapper;
  // node-llama-cpp reads the call syntax it watches for off the settings: the variant's, as it is now.
  Object.defineProperty(wrapper, "settings", { get: () => current().settings });
  wrapper.generateContextState = (options) => {
    const base = current();
    const state = base.generateContextState(options);
    if (!forcing() || !options.availableFunctions || Object.keys(options.availableFunctions).length === 0) return state;
    return {
      ...state,
      prefixTriggers: undefined,
      noPrefixTrigger: { type: "functionCall", inject: LlamaText(base.settings.functions.call.prefix) },
      detectFunctionCalls: true,
    } as ChatWrapperGeneratedContextState;
  };
  return wrapper;
}

/** Harmony's wrapper with its system message's "Reasoning: <effort>" line, as gpt-oss's template renders reasoning_effort. */
function withEffort(base: HarmonyChatWrapper, effort: ReasoningEffort): ChatWrapper {
  return Object.assign(Object.create(Object.getPrototypeOf(base) as object) as HarmonyChatWrapper, base, { reasoningEffort: effort });
}

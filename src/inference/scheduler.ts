// The model's time, owned in one place: which chat runs next, in which slot, and when a reverie
// (a dream, an idle thought, a reflection) gets the model and gives it back. The inference
// worker (workers/inference-worker.ts) fetches jobs and hands them here, deciding nothing; what
// runs a chat (conversation/run-turn.ts) or a reverie (dreams/reverie-job.ts) is handed its job
// from here and asks here for the model (generate). The engine below (inference/engine.ts)
// renders prompts and generates in the slot it is told. llama-server keeps the same split: a
// queue of tasks, and slots with a state each, chosen by what their cached prompt shares.
//
// ## Slots and their states
//
// The engine has `slots` chat sequences and one more, the reverie slot, so a reverie never
// evicts a conversation's cached prefix. Each slot is in one state, changed only by setState:
//
// | state      | what the slot does                                                   | entered from              |
// | ---------- | -------------------------------------------------------------------- | ------------------------- |
// | idle       | holds the tokens it read last; free                                  | start; any, on release    |
// | reading    | takes its prompt: a chat's slot starts here when it is given one      | idle, saving, loading, reserved |
// | saving     | writes what it holds to disk before the prompt replaces it           | reading                   |
// | loading    | loads a kept prompt that holds more of this one (inference/prompt-cache.ts) | reading, saving    |
// | generating | makes the reply's tokens                                             | reading                   |
// | reserved   | the reverie slot, held by a running reverie between its generations  | idle, reading, generating |
//
// A chat's slot goes back to idle when its generation ends, however it ends; the reverie slot
// goes back to reserved while a reverie holds it, and to idle when the last one ends.
//
// ## Admission
//
// - A chat is admitted while fewer than twice the slots are admitted: those beyond the slots
//   wait in line for one (first come, first served), their turns claimed and their memories
//   recalled while the others generate. A chat cancelled while it waits leaves the line.
// - A reverie is admitted alone: never beside a chat that runs, waits or was fetched with it.
//   Otherwise it goes back to the queue, and the end of the last chat asks the worker to look
//   again (look). Taken beside another reverie, the second goes back too.
// - While a reverie runs, nothing more is admitted (room is 0); a chat that arrives wakes it
//   (dreams/wake-watch.ts aborts it), and once told to stop it has WAKE_DEADLINE_MS to give the
//   model back: past that it is abandoned (it goes on to its end in its own slot, and its end is
//   written whenever it comes) and the chats go first.
// - Stopping admits nothing more and puts back what is handed over; what runs has the grace
//   period to end, and is then aborted with the hand-off reason (the next worker continues it).
import type { GenerateRequest, GenerateResult, Generator, InferenceEngine, RenderedPrompt, SlotPhase } from "./engine.js";
import { busyRuns, RUN_COST_TOKENS, slotScore } from "./slots.js";

export type SlotState = "idle" | SlotPhase | "reserved";

/** Which states a slot may go to from each (the table above). */
const NEXT: Record<SlotState, readonly SlotState[]> = {
  idle: ["reading", "reserved"],
  reading: ["saving", "loading", "generating", "idle", "reserved"],
  saving: ["loading", "reading", "idle"],
  loading: ["reading", "idle"],
  generating: ["idle", "reserved"],
  reserved: ["reading", "idle"],
};

/** After a reverie is told to stop, how long its generation has to end before the chats go first without it. */
export const WAKE_DEADLINE_MS = 500;

export interface SchedulerClock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const realClock: SchedulerClock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** A job the worker hands over: a chat or a reverie, with whatever its runner needs. */
export interface ScheduledJob {
  readonly id: string;
  readonly kind: "chat" | "reverie";
}

/** How a reverie's run ended, as its runner says (dreams/reverie-job.ts); "put-back": it went back to the queue. */
export type ReverieEnd = "put-back" | (string & {});

/** What runs the jobs the scheduler admits, and tells the queue what it decided. */
export interface SchedulerHooks<J extends ScheduledJob> {
  /** Runs a chat to its end; `signal` aborts with the hand-off reason when the worker stops. */
  runChat(job: J, signal: AbortSignal): Promise<void>;
  /** Runs a reverie to its end; aborting `controller` tells it to stop. Never rejects. */
  runReverie(job: J, controller: AbortController): Promise<ReverieEnd>;
  /** A reverie that did not stop within WAKE_DEADLINE_MS: the worker goes on; `run` settles when it ends. */
  abandoned(job: J, run: Promise<ReverieEnd>): void;
  /** Gives a fetched job back to the queue, untouched, to run after what outranks it. */
  returnToQueue(job: J): Promise<void>;
  /** The queue may hold something only a fetch finds (a reverie that went back, a job beyond those taken). */
  look(): void;
}

interface Slot {
  readonly index: number;
  state: SlotState;
  /** When it was last released (a counter): ties go to the one unused longest. */
  used: number;
}

interface Waiter {
  prompt: RenderedPrompt;
  resolve: (slot: Slot) => void;
}

export class ModelScheduler<J extends ScheduledJob> implements Generator {
  private readonly slots: Slot[];
  private readonly reverieSlot: Slot;
  private readonly line: Waiter[] = [];
  private clock = 0;
  /** Chats admitted and not ended, each with its controller. */
  private readonly chats = new Map<J, AbortController>();
  /** When the last chat ended (performance.now()). */
  private lastChatEndedAt = -Infinity;
  /** The reverie that holds the model, if any. */
  private reverie: { job: J; controller: AbortController } | undefined;
  /** A reverie's generations take turns on its slot. */
  private reverieTurn: Promise<unknown> = Promise.resolve();
  /** Reveries holding the reverie slot: the running one, and any abandoned one still ending. */
  private reverieHolds = 0;
  /** A reverie went back to the queue for the chats: the last chat's end asks for a look. */
  private reverieWaits = false;
  private stopping = false;
  private readonly ended = new Set<Promise<unknown>>();

  constructor(
    private readonly engine: InferenceEngine,
    private readonly hooks: SchedulerHooks<J>,
    private readonly time: SchedulerClock = realClock,
  ) {
    const n = engine.slots;
    if (!(n >= 1)) throw new Error("a scheduler needs at least one slot");
    this.slots = Array.from({ length: n }, (_, index) => ({ index, state: "idle", used: 0 }));
    this.reverieSlot = { index: n, state: "idle", used: 0 };
  }

  get modelName(): string {
    return this.engine.modelName;
  }

  get contextSize(): number | undefined {
    return this.engine.contextSize;
  }

  countTokens(text: string): number {
    return this.engine.countTokens(text);
  }

  /** Each slot's state, the chats' first and the reverie slot last. */
  get states(): SlotState[] {
    return [...this.slots, this.reverieSlot].map((s) => s.state);
  }

  /** Chats admitted and not ended (generating, or waiting in line). */
  get chatsUnderWay(): number {
    return this.chats.size;
  }

  /** Milliseconds since a chat was last under way here: 0 while one is, Infinity before the first. */
  get sinceChatMs(): number {
    return this.chats.size > 0 ? 0 : performance.now() - this.lastChatEndedAt;
  }

  /** Chats generating or reading now: at most the slots. */
  get streams(): number {
    return Math.min(this.chats.size, this.slots.length);
  }

  /** Chats waiting in line for a slot. */
  get waiting(): number {
    return this.line.length;
  }

  /** Chats taken at once: the slots, and as many again waiting in line. */
  get takes(): number {
    return this.slots.length * 2;
  }

  /** How many jobs the worker may take now: none while a reverie holds the model or the scheduler stops. */
  room(): number {
    if (this.stopping || this.reverie) return 0;
    return Math.max(0, this.takes - this.chats.size);
  }

  /**
   * Takes the jobs the worker fetched, in the order they came (by priority): each chat starts,
   * and a reverie runs if it is alone; what is not admitted goes back to the queue. Resolves once
   * the worker may fetch again: at once, or when the reverie it ran gave the model back.
   */
  async admit(jobs: readonly J[]): Promise<void> {
    // Only the first of a batch without chats, with no chat under way.
    const reverie = jobs[0]?.kind === "reverie" && !jobs.some((j) => j.kind === "chat") && this.chats.size === 0 && !this.reverie;
    let back = 0;
    for (const job of jobs) {
      const admitted = job.kind === "chat" ? this.chats.size < this.takes : reverie && job === jobs[0];
      if (this.stopping || !admitted) {
        await this.hooks.returnToQueue(job);
        back++;
        // A reverie beside chats waits for them to end; the end of the last asks for a look.
        if (job.kind === "reverie" && this.chats.size > 0) this.reverieWaits = true;
        continue;
      }
      if (job.kind === "chat") this.startChat(job);
      else await this.runReverie(job);
    }
    if (back > 0 && !this.reverieWaits) this.hooks.look();
  }

  /**
   * A chat stored already claimed for this worker, which held room for it while it was stored
   * (workers/inference-worker.ts, reserve): it starts, unless the scheduler stops (then false,
   * and the turn is left for the next worker to reclaim).
   */
  admitHanded(job: J): boolean {
    if (this.stopping || job.kind !== "chat") return false;
    this.startChat(job);
    return true;
  }

  private startChat(job: J): void {
    const controller = new AbortController();
    this.chats.set(job, controller);
    const run = this.hooks
      .runChat(job, controller.signal)
      .catch(() => undefined)
      .finally(() => {
        const wasFull = this.chats.size >= this.takes;
        this.chats.delete(job);
        this.lastChatEndedAt = performance.now();
        // The worker waits for room; otherwise a chat's end leaves nothing new to fetch (a job
        // queued meanwhile rang the worker itself), and a look would cost an empty fetch beside
        // the next request, which a coding agent sends right after the reply.
        if (this.reverieWaits && this.chats.size === 0) {
          this.reverieWaits = false;
          this.hooks.look();
        } else if (wasFull) this.hooks.look();
      });
    this.track(run);
  }

  /** Runs a reverie in the reverie slot until it ends, or until WAKE_DEADLINE_MS after it was told to stop. */
  private async runReverie(job: J): Promise<void> {
    const controller = new AbortController();
    this.reverie = { job, controller };
    this.reverieHolds++;
    if (this.reverieSlot.state === "idle") this.setState(this.reverieSlot, "reserved");
    const run = this.hooks.runReverie(job, controller);
    const release = () => {
      if (this.reverie?.job === job) this.reverie = undefined;
      if (--this.reverieHolds === 0 && this.reverieSlot.state === "reserved") this.setState(this.reverieSlot, "idle");
    };
    this.track(run.finally(release));
    let timer: unknown;
    const onAbort = () => (timer = this.time.setTimeout(() => given(), WAKE_DEADLINE_MS));
    let given: () => void = () => undefined;
    const deadline = new Promise<"abandoned">((resolve) => (given = () => resolve("abandoned")));
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const first = await Promise.race([run, deadline]);
      if (first === "put-back") this.hooks.look();
      if (first === "abandoned") {
        // The model did not stop at its next token: the chats go first (each has a slot of its
        // own), and the reverie's end is written whenever it comes.
        if (this.reverie?.job === job) this.reverie = undefined;
        this.hooks.abandoned(job, run);
      }
    } finally {
      this.time.clearTimeout(timer);
      controller.signal.removeEventListener("abort", onAbort);
    }
  }

  /** Generates in a slot: a reverie's in the reverie slot, a chat's in the best free one, or once one is free. */
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const prompt = this.engine.render(request);
    if (request.sequence === "dream") {
      const run = this.reverieTurn.then(() => this.generateInReverieSlot(prompt, request));
      this.reverieTurn = run.catch(() => undefined);
      return run;
    }
    const slot = await this.acquire(prompt, request.signal);
    try {
      await this.engine.prepare?.(slot.index, prompt, request.conversation, (phase) => this.setState(slot, phase));
      return await this.engine.generateIn(slot.index, prompt, request, (phase) => this.setState(slot, phase));
    } finally {
      this.release(slot);
    }
  }

  private async generateInReverieSlot(prompt: RenderedPrompt, request: GenerateRequest): Promise<GenerateResult> {
    const slot = this.reverieSlot;
    this.setState(slot, "reading");
    try {
      return await this.engine.generateIn(slot.index, prompt, request, (phase) => this.setState(slot, phase));
    } finally {
      // A reverie's own generations leave its slot reserved; one without a reverie (a bench, a test) leaves it idle.
      this.setState(slot, this.reverieHolds > 0 ? "reserved" : "idle");
    }
  }

  /**
   * The best free chat slot for `prompt`, now or once one is released (first come, first
   * served). A wait ends with `signal`'s reason when it aborts first: a chat cancelled while it
   * waits gives up its place.
   */
  private acquire(prompt: RenderedPrompt, signal?: AbortSignal): Promise<Slot> {
    const slot = this.line.length === 0 ? this.choose(prompt) : undefined;
    if (slot) {
      this.setState(slot, "reading");
      return Promise.resolve(slot);
    }
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const at = this.line.indexOf(waiter);
        if (at === -1) return;
        this.line.splice(at, 1);
        reject(signal!.reason as Error);
      };
      const waiter: Waiter = {
        prompt,
        resolve: (s) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(s);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.line.push(waiter);
    });
  }

  private release(slot: Slot): void {
    this.setState(slot, "idle");
    slot.used = ++this.clock;
    for (let next = this.line[0]; next; next = this.line[0]) {
      const free = this.choose(next.prompt);
      if (!free) return;
      this.line.shift();
      this.setState(free, "reading");
      next.resolve(free);
    }
  }

  /**
   * The free slot worth most to `prompt`: what it holds of it (inference/slots.ts), less a
   * place apart from the slots generating (each run of busy slots side by side is one more
   * decode pass per step); ties to the one unused longest.
   */
  private choose(prompt: RenderedPrompt): Slot | undefined {
    const worth = this.engine.slotWorth?.(prompt) ?? ((cached: readonly number[]) => slotScore(cached, prompt.tokens));
    const busy = this.slots.map((s) => s.state !== "idle");
    const runs = busyRuns(busy);
    let best: { slot: Slot; score: number } | undefined;
    for (const slot of this.slots) {
      if (slot.state !== "idle") continue;
      busy[slot.index] = true;
      const newRuns = busyRuns(busy) - runs;
      busy[slot.index] = false;
      const score = worth(this.engine.cachedTokens(slot.index)) - RUN_COST_TOKENS * newRuns;
      if (!best || score > best.score || (score === best.score && slot.used < best.slot.used)) best = { slot, score };
    }
    return best?.slot;
  }

  private setState(slot: Slot, state: SlotState): void {
    if (slot.state === state) return;
    if (!NEXT[slot.state].includes(state)) throw new Error(`slot ${slot.index}: no way from ${slot.state} to ${state}`);
    slot.state = state;
  }

  /** Work that outlives its job (a reverie's scoring and memories): stopping waits for it too. */
  outlive(work: Promise<unknown>): void {
    this.track(work);
  }

  private track(run: Promise<unknown>): void {
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.ended.add(settled);
    void settled.finally(() => this.ended.delete(settled));
  }

  /**
   * Admits nothing more; waits up to `graceMs` for what runs, then aborts it with `handOff`
   * (a chat handed off stays running for the next worker to reclaim). Resolves when everything
   * admitted has ended, an abandoned reverie included.
   */
  async stop(graceMs: number, handOff: () => Error): Promise<void> {
    this.stopping = true;
    const timer = this.time.setTimeout(() => {
      for (const controller of this.chats.values()) controller.abort(handOff());
      this.reverie?.controller.abort(handOff());
    }, graceMs);
    try {
      while (this.ended.size) await Promise.all(this.ended);
    } finally {
      this.time.clearTimeout(timer);
    }
  }
}

/**
 * A scheduler with no queue behind it, for a caller that only generates (a benchmark, a test of
 * the engine): it admits no jobs.
 */
export function standaloneScheduler(engine: InferenceEngine): ModelScheduler<ScheduledJob> {
  const none = () => {
    throw new Error("a standalone scheduler admits no jobs");
  };
  return new ModelScheduler(engine, { runChat: none, runReverie: none, abandoned: none, returnToQueue: none, look: () => undefined });
}

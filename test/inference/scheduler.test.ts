// The scheduler (src/inference/scheduler.ts) with a scripted engine and a fake clock, no
// database: the slots' states, where a chat goes, the line beyond the slots, when a reverie
// gets the model and when it goes back to the queue, the wake deadline, and stopping.
import t from "tap";
import type { GenerateRequest, GenerateResult, RenderedPrompt } from "../../src/inference/engine.js";
import { ModelScheduler, type ScheduledJob, type SchedulerClock, WAKE_DEADLINE_MS } from "../../src/inference/scheduler.js";
import { TestEngine } from "../helpers/scripted-engine.js";

/** Timers that run only when the test moves time on. */
class FakeClock implements SchedulerClock {
  now = 0;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private ids = 0;
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.ids;
    this.timers.push({ at: this.now + ms, fn, id });
    return id;
  }
  clearTimeout(id: unknown): void {
    this.timers = this.timers.filter((x) => x.id !== id);
  }
  advance(ms: number): void {
    this.now += ms;
    const due = this.timers.filter((x) => x.at <= this.now);
    this.timers = this.timers.filter((x) => x.at > this.now);
    for (const x of due) x.fn();
  }
}

const tick = () => new Promise((r) => setImmediate(r));

/**
 * An engine whose slots hold what the test says, whose prompt tokens are its messages' characters,
 * and whose generations wait until the test releases them (each by its first message's text).
 */
class SlotEngine extends TestEngine {
  readonly modelName = "slots";
  held: number[][];
  private readonly gates = new Map<string, () => void>();
  readonly opened: string[] = [];

  constructor(slots: number) {
    super(slots);
    this.held = Array.from({ length: slots + 1 }, () => []);
  }

  override render(request: GenerateRequest): RenderedPrompt {
    return { tokens: [...request.messages.map((m) => m.content).join("|")].map((c) => c.charCodeAt(0)) };
  }

  override cachedTokens(slot: number): readonly number[] {
    return this.held[slot]!;
  }

  /** Lets the generation named `name` finish. */
  release(name: string): void {
    this.gates.get(name)?.();
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const name = request.messages[0]!.content;
    this.opened.push(name);
    request.onText?.("x", 1);
    await new Promise<void>((resolve) => {
      this.gates.set(name, resolve);
      request.signal?.addEventListener("abort", () => resolve(), { once: true });
    });
    return { text: "x", finishReason: "stop", promptTokens: 1, completionTokens: 1, toolCalls: [] };
  }
}

interface Job extends ScheduledJob {
  name: string;
}

function setUp(slots: number) {
  const engine = new SlotEngine(slots);
  const clock = new FakeClock();
  const log: string[] = [];
  const reverieControllers = new Map<string, AbortController>();
  const reverieEnds = new Map<string, (end: string) => void>();
  const ask = (name: string, signal?: AbortSignal, sequence?: "dream") =>
    scheduler.generate({ messages: [{ role: "user", content: name }], maxTokens: 1, ...(signal ? { signal } : {}), sequence });
  const scheduler: ModelScheduler<Job> = new ModelScheduler<Job>(
    engine,
    {
      runChat: async (job, signal) => {
        log.push(`chat ${job.name}`);
        await ask(job.name, signal).catch(() => undefined);
        log.push(`chat ${job.name} ended`);
      },
      runReverie: (job, controller) => {
        log.push(`reverie ${job.name}`);
        reverieControllers.set(job.name, controller);
        return new Promise((resolve) => reverieEnds.set(job.name, resolve));
      },
      abandoned: (job) => log.push(`abandoned ${job.name}`),
      returnToQueue: async (job) => void log.push(`back ${job.name}`),
      look: () => log.push("look"),
    },
    clock,
  );
  const chat = (name: string): Job => ({ id: name, kind: "chat", name });
  const reverie = (name: string): Job => ({ id: name, kind: "reverie", name });
  return { engine, clock, log, scheduler, chat, reverie, ask, reverieControllers, reverieEnds };
}

t.test("a chat's slot goes idle, reading, generating, idle", async (t) => {
  const { engine, scheduler, chat } = setUp(2);
  t.same(scheduler.states, ["idle", "idle", "idle"], "two chat slots and the reverie's, all idle");
  await scheduler.admit([chat("a")]);
  await tick();
  t.same(scheduler.states, ["generating", "idle", "idle"], "generating from its first token");
  engine.release("a");
  await tick();
  await tick();
  t.same(scheduler.states, ["idle", "idle", "idle"]);
  t.equal(scheduler.chatsUnderWay, 0);
});

t.test("twice the slots are taken; those beyond wait in line, first come first served; a cancel leaves the line", async (t) => {
  const { engine, scheduler, chat, ask } = setUp(2);
  t.equal(scheduler.room(), 4);
  await scheduler.admit([chat("a"), chat("b"), chat("c")]);
  await tick();
  t.same(engine.opened, ["a", "b"], "two slots, two generate");
  t.equal(scheduler.waiting, 1, "the third waits for a slot");
  t.equal(scheduler.room(), 1);
  const cancel = new AbortController();
  const cancelled = ask("d", cancel.signal);
  await scheduler.admit([chat("e")]);
  await tick();
  t.equal(scheduler.room(), 0, "four taken: no room");
  t.equal(scheduler.waiting, 3);
  cancel.abort(new Error("cancelled"));
  await t.rejects(cancelled, /cancelled/, "a cancel ends the wait");
  t.equal(scheduler.waiting, 2);
  engine.release("a");
  await tick();
  await tick();
  t.same(engine.opened, ["a", "b", "c"], "the first in line goes next");
  engine.release("b");
  await tick();
  await tick();
  t.same(engine.opened, ["a", "b", "c", "e"]);
  engine.release("c");
  engine.release("e");
  await tick();
  await tick();
  t.equal(scheduler.chatsUnderWay, 0);
});

t.test("a chat goes to the slot that holds most of its prompt; among equals, next to those generating", async (t) => {
  const { engine, scheduler, chat } = setUp(4);
  const codes = (s: string) => [...s].map((c) => c.charCodeAt(0));
  engine.held[2] = codes("conversation one");
  await scheduler.admit([chat("conversation one, next turn")]);
  await tick();
  t.same(
    engine.placed.map((p) => p.slot),
    [2],
    "the slot holding its history",
  );
  await scheduler.admit([chat("z")]);
  await tick();
  t.same(
    engine.placed.map((p) => p.slot),
    [2, 1],
    "beside the one generating, among empty slots",
  );
  t.same(scheduler.states.slice(0, 4), ["idle", "generating", "generating", "idle"]);
  engine.release("conversation one, next turn");
  engine.release("z");
  await tick();
});

t.test("a reverie runs alone in its own slot; nothing is taken while it runs", async (t) => {
  const { engine, scheduler, reverie, reverieEnds, ask } = setUp(2);
  const admitted = scheduler.admit([reverie("dream")]);
  await tick();
  t.same(scheduler.states, ["idle", "idle", "reserved"], "the reverie slot is reserved");
  t.equal(scheduler.room(), 0, "no room while a reverie holds the model");
  const dreaming = ask("a dream's prompt", undefined, "dream");
  await tick();
  t.same(engine.placed.at(-1)?.slot, 2, "its generation goes to the reverie slot");
  t.same(scheduler.states, ["idle", "idle", "generating"]);
  engine.release("a dream's prompt");
  await dreaming;
  t.same(scheduler.states, ["idle", "idle", "reserved"], "reserved again between its generations");
  reverieEnds.get("dream")!("dream-done");
  await admitted;
  t.same(scheduler.states, ["idle", "idle", "idle"]);
  t.equal(scheduler.room(), 4);
});

t.test("a reverie beside chats goes back to the queue; the last chat's end asks for a look", async (t) => {
  const { engine, scheduler, chat, reverie, log } = setUp(2);
  await scheduler.admit([chat("a"), reverie("fetched with a chat")]);
  t.same(log, ["chat a", "back fetched with a chat"], "fetched with a chat: back, no look while chats run");
  await scheduler.admit([reverie("while a chat runs")]);
  t.same(log.slice(2), ["back while a chat runs"]);
  await scheduler.admit([reverie("first"), reverie("second")]);
  t.same(log.slice(3), ["back first", "back second"], "chats still run: both back");
  engine.release("a");
  await tick();
  await tick();
  t.same(log.slice(5), ["chat a ended", "look"], "the last chat's end asks the worker to fetch again");
});

t.test("of two reveries fetched together the first runs and the second goes back", async (t) => {
  const { scheduler, reverie, log, reverieEnds } = setUp(1);
  const admitted = scheduler.admit([reverie("first"), reverie("second")]);
  await tick();
  t.same(log, ["reverie first"]);
  reverieEnds.get("first")!("dream-done");
  await admitted;
  t.same(log, ["reverie first", "back second", "look"]);
});

t.test("a reverie told to stop has WAKE_DEADLINE_MS to give the model back, then the chats go first", async (t) => {
  const { scheduler, reverie, log, clock, reverieControllers, reverieEnds } = setUp(1);
  let given = false;
  const admitted = scheduler.admit([reverie("deaf")]).then(() => (given = true));
  await tick();
  reverieControllers.get("deaf")!.abort(new Error("a chat came"));
  clock.advance(WAKE_DEADLINE_MS - 1);
  await tick();
  t.notOk(given, "still waited for before the deadline");
  clock.advance(1);
  await admitted;
  t.same(log, ["reverie deaf", "abandoned deaf"]);
  t.equal(scheduler.room(), 2, "the chats may come");
  t.equal(scheduler.states[1], "reserved", "its slot is still its own until it ends");
  reverieEnds.get("deaf")!("dream-interrupted");
  await tick();
  await tick();
  t.equal(scheduler.states[1], "idle");
});

t.test("a reverie that stops in time is not abandoned, and one that goes back asks for a look", async (t) => {
  const { scheduler, reverie, log, clock, reverieControllers, reverieEnds } = setUp(1);
  const admitted = scheduler.admit([reverie("woken")]);
  await tick();
  reverieControllers.get("woken")!.abort(new Error("a chat came"));
  clock.advance(10);
  reverieEnds.get("woken")!("dream-interrupted");
  await admitted;
  clock.advance(WAKE_DEADLINE_MS);
  t.same(log, ["reverie woken"]);
  const again = scheduler.admit([reverie("late")]);
  await tick();
  reverieEnds.get("late")!("put-back");
  await again;
  t.same(log.slice(1), ["reverie late", "look"]);
});

t.test("stopping takes nothing more, and hands off what still runs after the grace", async (t) => {
  const { scheduler, chat, reverie, log, clock } = setUp(1);
  await scheduler.admit([chat("a")]);
  await tick();
  let stopped = false;
  const stopping = scheduler.stop(1000, () => new Error("handed off")).then(() => (stopped = true));
  t.equal(scheduler.room(), 0);
  await scheduler.admit([chat("b"), reverie("r")]);
  t.same(log, ["chat a", "back b", "back r"], "put back, not started");
  clock.advance(999);
  await tick();
  t.notOk(stopped, "the chat has its grace");
  clock.advance(1);
  await stopping;
  t.same(log.slice(0, 4), ["chat a", "back b", "back r", "chat a ended"], "aborted with the hand-off after it");
});

t.test("a slot's state changes only along the table", async (t) => {
  const { scheduler } = setUp(1);
  const slot = (scheduler as unknown as { slots: { index: number; state: string }[] }).slots[0]!;
  const setState = (scheduler as unknown as { setState(s: unknown, state: string): void }).setState.bind(scheduler);
  t.throws(() => setState(slot, "generating"), /no way from idle to generating/);
  setState(slot, "reading");
  setState(slot, "loading");
  t.throws(() => setState(slot, "generating"), /no way from loading to generating/, "a loaded prompt is read before it generates");
});

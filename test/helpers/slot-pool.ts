// The scheduler's slot choice driven as a pool of slots (inference/scheduler.ts): acquire a slot
// for a prompt's tokens, release it. Each acquire is a generation whose engine holds it in its
// slot until the test releases it; the slots hold the tokens the test gives them.
import type { GenerateRequest, GenerateResult, RenderedPrompt } from "../../src/inference/engine.js";
import { standaloneScheduler } from "../../src/inference/scheduler.js";
import { TestEngine } from "./scripted-engine.js";

class PoolEngine extends TestEngine {
  readonly modelName = "pool";
  readonly prompts = new Map<string, readonly number[]>();
  readonly placedAt = new Map<string, (slot: number) => void>();
  readonly gates = new Map<number, () => void>();

  constructor(
    readonly held: readonly (readonly number[])[],
    private readonly worth?: (prompt: readonly number[]) => (cached: readonly number[]) => number,
  ) {
    super(held.length);
  }

  override cachedTokens(slot: number): readonly number[] {
    return this.held[slot] ?? [];
  }

  override render(request: GenerateRequest): RenderedPrompt {
    return { tokens: this.prompts.get(request.messages[0]!.content) ?? [] };
  }

  override slotWorth(prompt: RenderedPrompt) {
    return this.worth?.(prompt.tokens);
  }

  override async generateIn(slot: number, _prompt: RenderedPrompt, request: GenerateRequest): Promise<GenerateResult> {
    const held = new Promise<void>((resolve) => this.gates.set(slot, resolve));
    this.placedAt.get(request.messages[0]!.content)?.(slot);
    await held;
    return { text: "", finishReason: "stop", promptTokens: 0, completionTokens: 0, toolCalls: [] };
  }

  async generate(): Promise<GenerateResult> {
    throw new Error("unused");
  }
}

export interface PoolSlot {
  index: number;
}

export function slotPool(
  held: readonly (readonly number[])[],
  worth?: (prompt: readonly number[]) => (cached: readonly number[]) => number,
) {
  const engine = new PoolEngine(held, worth);
  const scheduler = standaloneScheduler(engine);
  let asked = 0;
  return {
    acquire(prompt: readonly number[], signal?: AbortSignal): Promise<PoolSlot> {
      const key = `prompt ${++asked}`;
      engine.prompts.set(key, prompt);
      return new Promise((resolve, reject) => {
        engine.placedAt.set(key, (index) => resolve({ index }));
        scheduler.generate({ messages: [{ role: "user", content: key }], maxTokens: 1, ...(signal ? { signal } : {}) }).catch(reject);
      });
    },
    async release(slot: PoolSlot): Promise<void> {
      engine.gates.get(slot.index)?.();
      // The scheduler releases the slot once the generation has returned.
      for (let i = 0; i < 5; i++) await Promise.resolve();
    },
    get busy(): number {
      return scheduler.states.slice(0, -1).filter((s) => s !== "idle").length;
    },
    get waiters(): number {
      return scheduler.waiting;
    },
  };
}

// Scripted stand-ins for the model, for tests where the model must decide something (a random
// model never decides anything). Everything around them stays real, the scheduler included
// (inference/scheduler.ts): a test engine answers generate(request) in whatever slot it is told.
import type { GenerateRequest, GenerateResult, InferenceEngine, RenderedPrompt, SlotPhase } from "../../src/inference/engine.js";

/** An engine written as one generate(request): its slots hold nothing, and a prompt's tokens are none. */
export abstract class TestEngine implements InferenceEngine {
  abstract readonly modelName: string;
  /** Generations made, each with the slot it was made in (the reverie slot is `slots`). */
  readonly placed: { slot: number; request: GenerateRequest }[] = [];

  /** `slots`: chat slots (the reverie's is one more). */
  constructor(readonly slots: number = 1) {}

  abstract generate(request: GenerateRequest): Promise<GenerateResult>;

  cachedTokens(_slot: number): readonly number[] {
    return [];
  }

  render(_request: GenerateRequest): RenderedPrompt {
    return { tokens: [] };
  }

  slotWorth(_prompt: RenderedPrompt): ((cached: readonly number[]) => number) | undefined {
    return undefined;
  }

  async generateIn(
    slot: number,
    _prompt: RenderedPrompt,
    request: GenerateRequest,
    phase: (p: SlotPhase) => void,
  ): Promise<GenerateResult> {
    this.placed.push({ slot, request });
    phase("reading");
    let first = true;
    return this.generate({
      ...request,
      onText: (text, tokens) => {
        if (first) phase("generating");
        first = false;
        request.onText?.(text, tokens);
      },
    });
  }

  countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  async dispose(): Promise<void> {}
}

export interface ScriptedReply {
  text?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
}

export class ScriptedEngine extends TestEngine {
  readonly modelName: string = "scripted";
  /** No thinking channel: a thought budget asked of it is named as ignored. */
  readonly thinks = false;
  readonly requests: GenerateRequest[] = [];

  /** `slots`: chat slots, as --parallel gives a real engine. */
  constructor(
    private readonly script: (request: GenerateRequest) => ScriptedReply,
    slots = 1,
  ) {
    super(slots);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.requests.push(request);
    const reply = this.script(request);
    const text = reply.text ?? "";
    if (text) request.onText?.(text, 1);
    const toolCalls = (reply.toolCalls ?? []).map((c) => ({ name: c.name, arguments: JSON.stringify(c.arguments), problems: [] }));
    return {
      text,
      finishReason: toolCalls.length ? "tool_calls" : "stop",
      promptTokens: 10,
      completionTokens: 1 + toolCalls.length,
      toolCalls,
    };
  }
}

/** The messages after the latest user message (tool results the script reacts to). */
export function sinceUser(request: GenerateRequest) {
  const i = request.messages.findLastIndex((m) => m.role === "user");
  return { user: request.messages[i]?.content ?? "", after: request.messages.slice(i + 1) };
}

// A scripted stand-in for the model, for tests where the model must decide to use a tool
// (a random model never decides anything). Everything around it stays real.
import type { GenerateRequest, GenerateResult, InferenceEngine } from "../../src/inference/engine.js";

export interface ScriptedReply {
  text?: string;
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
}

export class ScriptedEngine implements InferenceEngine {
  readonly modelName = "scripted";
  readonly requests: GenerateRequest[] = [];

  constructor(private readonly script: (request: GenerateRequest) => ScriptedReply) {}

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

  countTokens(text: string): number {
    return Math.ceil(text.length / 4);
  }

  async dispose(): Promise<void> {}
}

/** The messages after the latest user message (tool results the script reacts to). */
export function sinceUser(request: GenerateRequest) {
  const i = request.messages.findLastIndex((m) => m.role === "user");
  return { user: request.messages[i]?.content ?? "", after: request.messages.slice(i + 1) };
}

// Psyche's own tools, run inside the worker: the model may recall and store memories in the
// middle of a turn. The client never sees these calls; they are recorded with the turn.
import { argumentProblems } from "../tools/arguments.js";
import type { GeneratedToolCall, ToolSpec } from "../tools/types.js";
import type { Memory } from "./memory.js";
import { DEFAULT_SCOPE, readableScopes } from "../scope.js";

export interface ServerTools {
  readonly specs: readonly ToolSpec[];
  has(name: string): boolean;
  /** The result for the model, as JSON text; failures are results too (the model reads them). */
  run(call: Pick<GeneratedToolCall, "name" | "arguments">, ctx: ServerToolContext): Promise<string>;
}

/** Whose turn calls: its id, its signal, and its conversation's scope (src/scope.ts). */
export interface ServerToolContext {
  turnId: string;
  signal?: AbortSignal | undefined;
  /** Default: default. */
  scope?: string | undefined;
}

export const MEMORY_TOOL_SPECS: readonly ToolSpec[] = [
  {
    name: "recall_memory",
    description: "Search your long-term memory for what you know about something",
    parameters: {
      type: "object",
      properties: { query: { type: "string", minLength: 1, maxLength: 500 }, k: { type: "integer", minimum: 1, maximum: 10 } },
      required: ["query"],
    },
  },
  {
    name: "store_memory",
    description: "Remember something for later conversations",
    parameters: {
      type: "object",
      properties: {
        content: { type: "string", minLength: 1, maxLength: 2000 },
        summary: { type: "string", minLength: 1, maxLength: 200, description: "A line that says what it is about" },
        kind: { enum: ["semantic", "episodic"], description: "semantic (the default): a fact; episodic: something that happened" },
        importance: { type: "number", minimum: 0, maximum: 1 },
        tags: { type: "array", items: { type: "string", maxLength: 64 }, maxItems: 8 },
      },
      required: ["content"],
    },
  },
];

export class MemoryTools implements ServerTools {
  readonly specs = MEMORY_TOOL_SPECS;

  constructor(private readonly memory: Memory) {}

  has(name: string): boolean {
    return this.specs.some((s) => s.name === name);
  }

  async run(call: Pick<GeneratedToolCall, "name" | "arguments">, ctx: ServerToolContext): Promise<string> {
    const problems = argumentProblems(this.specs, call);
    if (problems.length) return JSON.stringify({ error: `invalid arguments: ${problems.join("; ")}` });
    const args = JSON.parse(call.arguments) as Record<string, unknown>;
    if (call.name === "recall_memory") {
      // Dream text reaches a chat only as the recall's set-apart background (memory/recall.ts).
      const memories = await this.memory.recall(String(args.query), typeof args.k === "number" ? args.k : 5, {
        signal: ctx.signal,
        scopes: readableScopes(ctx.scope ?? DEFAULT_SCOPE),
      });
      return JSON.stringify({
        memories: memories.map((r) => ({
          id: r.memory.id,
          kind: r.memory.kind,
          content: r.memory.content,
          created_at: r.memory.created_at,
        })),
      });
    }
    const stored = await this.memory.remember({
      kind: args.kind === "episodic" ? "episodic" : "semantic",
      content: String(args.content),
      summary: typeof args.summary === "string" ? args.summary : null,
      importance: typeof args.importance === "number" ? args.importance : undefined,
      tags: Array.isArray(args.tags) ? args.tags.map(String) : [],
      sourceKind: "tool",
      sourceId: ctx.turnId,
      scope: ctx.scope,
      toolCalls: 1,
      signal: ctx.signal,
    });
    return JSON.stringify({ stored: stored.memory.id, reinforced: stored.reinforced });
  }
}

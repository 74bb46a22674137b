// A reference client loop (the Hermes client of seed 001 in miniature): it offers file tools,
// runs the calls Psyche returns inside a sandboxed workspace, sends the results back, and
// loops until the reply is no longer a tool call.
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";

export const FILE_TOOLS: ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "read_file",
      description: "Read a text file in the workspace",
      parameters: { type: "object", properties: { path: { type: "string", maxLength: 200 } }, required: ["path"] },
    },
  },
  {
    type: "function",
    function: {
      name: "list_directory",
      description: "List a directory in the workspace",
      parameters: { type: "object", properties: { path: { type: "string", maxLength: 200 } } },
    },
  },
];

export class FileToolClient {
  /** Every tool this client ran, in order, with what it answered. */
  readonly ran: { name: string; arguments: string; result: string }[] = [];
  private readonly root: string;

  constructor(
    private readonly openai: OpenAI,
    workspace: string,
  ) {
    this.root = realpathSync(workspace);
  }

  /** A path inside the workspace, or an error: absolute paths, `..` and symlinks out are refused. */
  resolveInside(path: string): string {
    if (isAbsolute(path)) throw new Error(`refused: ${path} is absolute; paths are relative to the workspace`);
    const target = resolve(this.root, path);
    const real = realpathSync(target);
    const rel = relative(this.root, real);
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new Error(`refused: ${path} is outside the workspace`);
    return real;
  }

  runTool(name: string, args: string): string {
    try {
      const parsed = JSON.parse(args) as { path?: unknown };
      const path = typeof parsed.path === "string" && parsed.path ? parsed.path : ".";
      if (name === "read_file") return readFileSync(this.resolveInside(path), "utf8").slice(0, 20_000);
      if (name === "list_directory") {
        const dir = this.resolveInside(path);
        if (!statSync(dir).isDirectory()) return `error: ${path} is not a directory`;
        return readdirSync(dir, { withFileTypes: true })
          .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
          .sort()
          .join("\n");
      }
      return `error: this client has no tool named ${name}`;
    } catch (err) {
      return `error: ${(err as Error).message}`;
    }
  }

  /** Asks, runs tools until the reply is text (or `maxRounds` is reached); returns the reply. */
  async ask(
    question: string,
    opts: { firstChoice?: "required" | "auto"; maxTokens?: number; seed?: number; maxRounds?: number } = {},
  ): Promise<{ content: string | null; finishReason: string; rounds: number; messages: ChatCompletionMessageParam[] }> {
    const messages: ChatCompletionMessageParam[] = [{ role: "user", content: question }];
    for (let round = 1; ; round++) {
      const res = await this.openai.chat.completions.create({
        model: "psyche",
        messages,
        tools: FILE_TOOLS,
        tool_choice: round === 1 ? (opts.firstChoice ?? "auto") : "auto",
        max_tokens: opts.maxTokens ?? 200,
        ...(opts.seed === undefined ? {} : { seed: opts.seed }),
      });
      const choice = res.choices[0]!;
      if (choice.finish_reason !== "tool_calls" || round >= (opts.maxRounds ?? 8)) {
        return { content: choice.message.content, finishReason: choice.finish_reason, rounds: round, messages };
      }
      messages.push({ role: "assistant", content: choice.message.content, tool_calls: choice.message.tool_calls });
      for (const call of choice.message.tool_calls ?? []) {
        if (call.type !== "function") continue;
        const result = this.runTool(call.function.name, call.function.arguments);
        this.ran.push({ name: call.function.name, arguments: call.function.arguments, result });
        messages.push({ role: "tool", tool_call_id: call.id, content: result });
      }
    }
  }
}

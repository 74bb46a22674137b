// Hermes's local tools (read, list, search, create, edit, bash), run on the user's machine inside the workspace. The
// server only ever sees their definitions and results. A tool never throws: whatever goes
// wrong becomes its result ("error: ..."), which goes back to the model.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import type { ChatCompletionFunctionTool } from "openai/resources/chat/completions";
import type { PrivateFiles } from "./private-files.js";
import { Workspace } from "./workspace.js";

/** Read-only tools: the only ones idle exploration may run, and never asked about. */
export const SAFE_TOOLS = ["read_file", "list_directory", "search_codebase"] as const;
export const TOOL_NAMES = [...SAFE_TOOLS, "create_file", "edit_file", "execute_bash"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

const MAX_READ_CHARS = 20_000;
const MAX_LISTED = 500;
const MAX_MATCHES = 50;
const SKIPPED_DIRS = new Set([".git", "node_modules", "dist", "build", ".venv", "__pycache__"]);

const path = z.string().min(1).max(1024);
const ARGUMENTS = {
  read_file: z.object({ path }),
  list_directory: z.object({ path: path.optional() }),
  search_codebase: z.object({ query: z.string().min(1).max(500), path: path.optional() }),
  create_file: z.object({ path, content: z.string().max(1_000_000) }),
  edit_file: z.object({ path, old_text: z.string().min(1), new_text: z.string() }),
  execute_bash: z.object({ command: z.string().min(1).max(10_000) }),
} satisfies Record<ToolName, z.ZodType>;

const fn = (name: ToolName, description: string, properties: Record<string, unknown>, required: string[]): ChatCompletionFunctionTool => ({
  type: "function",
  function: { name, description, parameters: { type: "object", properties, required, additionalProperties: false } },
});
const P = { type: "string", description: "a path relative to the workspace", maxLength: 1024 };

export const TOOL_DEFINITIONS: ChatCompletionFunctionTool[] = [
  fn("read_file", "Read a text file in the workspace", { path: P }, ["path"]),
  fn("list_directory", "List a directory in the workspace (default: its root)", { path: P }, []),
  fn("search_codebase", "Find lines containing a text in the workspace's files", { query: { type: "string", maxLength: 500 }, path: P }, [
    "query",
  ]),
  fn("create_file", "Create a new file in the workspace (refused if it exists: use edit_file)", { path: P, content: { type: "string" } }, [
    "path",
    "content",
  ]),
  fn(
    "edit_file",
    "Replace one exact occurrence of old_text with new_text in a workspace file",
    { path: P, old_text: { type: "string" }, new_text: { type: "string" } },
    ["path", "old_text", "new_text"],
  ),
  fn(
    "execute_bash",
    "Run a bash command in the workspace (time-limited, output capped)",
    { command: { type: "string", maxLength: 10_000 } },
    ["command"],
  ),
];

export interface ToolOptions {
  /** Asked before create_file, edit_file and execute_bash; false declines the call. */
  confirm: (name: ToolName, args: Record<string, unknown>) => Promise<boolean>;
  bashTimeoutMs: number;
  /** Characters of a command's output kept (the rest is cut, and says so). */
  bashOutputChars: number;
  signal?: AbortSignal | undefined;
  /** Secrets and ignored files (hermes/private-files.ts); none when absent. */
  privateFiles?: PrivateFiles | undefined;
  /** No one is there to ask (idle exploration): private files are skipped, never read. */
  unattended?: boolean;
}

export interface ToolResult {
  ok: boolean;
  output: string;
}

export class LocalTools {
  constructor(
    readonly workspace: Workspace,
    private readonly options: ToolOptions,
  ) {}

  /** Runs a call as the model sent it (arguments as a JSON string). Never throws. */
  async run(name: string, rawArgs: string, only: readonly string[] = TOOL_NAMES): Promise<ToolResult> {
    try {
      if (!(TOOL_NAMES as readonly string[]).includes(name) || !only.includes(name))
        return fail(`no tool named ${name} here; the tools are ${only.join(", ")}`);
      const tool = name as ToolName;
      let json: unknown;
      try {
        json = rawArgs.trim() ? JSON.parse(rawArgs) : {};
      } catch {
        return fail(`the arguments are not JSON: ${rawArgs.slice(0, 200)}`);
      }
      const parsed = ARGUMENTS[tool].safeParse(json);
      if (!parsed.success)
        return fail(
          `bad arguments for ${tool}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ")}`,
        );
      const args = parsed.data as Record<string, string | undefined>;
      // A path outside is refused before anyone is asked about it.
      if (args.path !== undefined) this.workspace.resolve(args.path);
      if (!(SAFE_TOOLS as readonly string[]).includes(tool) && !(await this.options.confirm(tool, args)))
        return fail("the user declined this call");
      return await this.dispatch(tool, args);
    } catch (err) {
      return fail((err as Error).message);
    }
  }

  private async dispatch(tool: ToolName, a: Record<string, string | undefined>): Promise<ToolResult> {
    const ws = this.workspace;
    switch (tool) {
      case "read_file": {
        const file = ws.resolve(a.path!);
        if (this.isPrivate(file)) {
          if (this.options.unattended)
            return fail(`${a.path} is private (a secret, or a file the workspace ignores): not read while the user is away`);
          if (!(await this.options.confirm(tool, { ...a, private: true }))) return fail("the user declined this call");
        }
        const text = readFileSync(file, "utf8");
        return ok(text.length > MAX_READ_CHARS ? `${text.slice(0, MAX_READ_CHARS)}\n[cut: ${text.length} characters in all]` : text);
      }
      case "list_directory": {
        const dir = ws.resolve(a.path ?? ".");
        if (!statSync(dir).isDirectory()) return fail(`${a.path} is not a directory`);
        const entries = readdirSync(dir, { withFileTypes: true });
        // Unattended, even a private file's name stays home.
        const shown = this.options.unattended ? entries.filter((e) => !this.isPrivate(join(dir, e.name), e.isDirectory())) : entries;
        const hidden = entries.length - shown.length;
        const names = shown.map((e) => (e.isDirectory() ? `${e.name}/` : e.isSymbolicLink() ? `${e.name}@` : e.name)).sort();
        const listed = names.length
          ? names.slice(0, MAX_LISTED).join("\n") + (names.length > MAX_LISTED ? `\n[${names.length - MAX_LISTED} more]` : "")
          : "(empty)";
        return ok(hidden ? `${listed}\n[${hidden} private ${hidden === 1 ? "entry" : "entries"} not shown]` : listed);
      }
      case "search_codebase":
        return ok(search(ws, ws.resolve(a.path ?? "."), a.query!, (real, dir) => this.isPrivate(real, dir)));
      case "create_file": {
        const file = ws.resolve(a.path!);
        if (existsSync(file)) return fail(`${a.path} exists; use edit_file to change it`);
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, a.content!, { flag: "wx" });
        return ok(`created ${ws.show(file)} (${a.content!.length} characters)`);
      }
      case "edit_file": {
        const file = ws.resolve(a.path!);
        const text = readFileSync(file, "utf8");
        const at = text.indexOf(a.old_text!);
        if (at < 0) return fail(`old_text is not in ${a.path}`);
        if (text.indexOf(a.old_text!, at + 1) >= 0) return fail(`old_text occurs more than once in ${a.path}; give more of it`);
        writeFileSync(file, text.slice(0, at) + a.new_text! + text.slice(at + a.old_text!.length));
        return ok(`edited ${ws.show(file)}`);
      }
      case "execute_bash":
        return bash(ws.root, a.command!, this.options);
    }
  }

  private isPrivate(real: string, isDirectory = false): boolean {
    return this.options.privateFiles?.isPrivate(real, isDirectory) ?? false;
  }
}

const ok = (output: string): ToolResult => ({ ok: true, output });
const fail = (message: string): ToolResult => ({ ok: false, output: `error: ${message}` });

/** Lines containing `query`; private files are never searched, since a search cannot ask about each. */
function search(ws: Workspace, from: string, query: string, isPrivate: (real: string, isDirectory: boolean) => boolean): string {
  const needle = query.toLowerCase();
  const found: string[] = [];
  let skipped = 0;
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name))) {
      if (found.length >= MAX_MATCHES) return;
      const full = join(dir, e.name);
      if (e.isDirectory()) {
        if (SKIPPED_DIRS.has(e.name)) continue;
        if (isPrivate(full, true)) skipped++;
        else walk(full);
      } else if (e.isFile() && isPrivate(full, false)) {
        skipped++;
      } else if (e.isFile() && statSync(full).size < 1_000_000) {
        const text = readFileSync(full, "utf8");
        if (text.includes("\0")) continue; // binary
        text.split("\n").forEach((line, i) => {
          if (found.length < MAX_MATCHES && line.toLowerCase().includes(needle))
            found.push(`${ws.show(full)}:${i + 1}: ${line.trim().slice(0, 200)}`);
        });
      }
    }
  };
  if (statSync(from).isDirectory()) walk(from);
  else walk(dirname(from));
  const note = skipped ? `\n[${skipped} private ${skipped === 1 ? "file or folder" : "files or folders"} not searched]` : "";
  return (
    (found.length
      ? found.join("\n") + (found.length >= MAX_MATCHES ? `\n[stopped at ${MAX_MATCHES} matches]` : "")
      : `no line contains "${query}"`) + note
  );
}

function bash(cwd: string, command: string, o: ToolOptions): Promise<ToolResult> {
  return new Promise((done) => {
    const child = spawn("bash", ["-c", command], { cwd, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    let cut = 0;
    const take = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      const room = o.bashOutputChars - out.length;
      if (room > 0) out += text.slice(0, room);
      cut += Math.max(0, text.length - Math.max(room, 0));
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    let why = "";
    // The whole process group: a command's own children must not outlive it.
    const kill = (reason: string) => {
      why = reason;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => kill(`timed out after ${o.bashTimeoutMs / 1000} s`), o.bashTimeoutMs);
    const onAbort = () => kill("cancelled");
    o.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (err) => {
      clearTimeout(timer);
      done(fail(err.message));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
      const text = out + (cut ? `\n[cut: ${cut} more characters]` : "");
      if (why) done(fail(`${why}\n${text}`.trimEnd()));
      else done({ ok: code === 0, output: `${text}${text.endsWith("\n") || !text ? "" : "\n"}[exit ${code}]` });
    });
  });
}

// Command-line parsing: `psyche <command> [flags]`. Flags are the config keys in kebab-case.
import { parseArgs } from "node:util";
import { ENV_NAMES, flagName } from "./config.js";
import { UserError, type UserErrorOptions } from "./errors.js";

export const COMMANDS = [
  "serve",
  "start",
  "stop",
  "status",
  "logs",
  "db",
  "migrate",
  "web",
  "inference",
  "mcp",
  "model",
  "hook",
  "install",
  "uninstall",
  "chat",
  "memory",
  "launch",
] as const;
export type Command = (typeof COMMANDS)[number];

export class UsageError extends UserError {
  override name = "UsageError";
  constructor(message: string, opts: UserErrorOptions = {}) {
    super(message, { exitCode: 2, ...opts });
  }
}

export const USAGE = `Usage: psyche <command> [flags]

Commands:
  serve       every role in one process (embedded Postgres unless DATABASE_URL is set)
  start       serve in the background: returns once /health answers (PID file and log in the data dir)
  stop        stop the background server (SIGTERM, then SIGKILL after the grace period)
  status      whether the background server runs: pid, URL, uptime, version (exit 3 when not)
  logs [-f]   the background server's log; -f follows it
  db          the embedded Postgres alone, on --db-port
  migrate     apply database migrations, then exit (the Procfile's release)
  web         the HTTP API only
  inference   the inference worker only (loads the model)
  mcp         MCP over stdio, bridged to a running server's /mcp (--server-url)
  model tiny|tiny-agent|bench --out <file>
              write a random-weight GGUF model (tiny: for tests; tiny-agent: GPT-4's
              tokenizer and a 32k context, for coding agents; bench: ~0.5B-shaped)
  model tiny --family <name> --out <file>
              a family's test model: its real tokenizer and chat template, random weights,
              a 32k context (qwen3, deepseek-r1, llama3.1, gemma4, gpt-oss, ...: docs/models.md);
              --model tiny-<name> makes one and serves it
  model pull <hf: URI or URL>
              download a model into the data directory ahead of start-up (a progress bar, no time limit)
  hook <event> [--format claude|typed]
              a coding agent's hook (session-start, user-prompt-submit, pre-tool-use, post-tool-use,
              session-end): hook JSON on stdin, what the agent reads on stdout; never fails the agent
  chat [-p "message"] [--workspace DIR] [--server URL] [--yes] ...
              Hermes, the terminal client: talk to Psyche, tools run here (psyche chat --help)
  memory export [--out <file>] [--embeddings]
              a running server's memories as NDJSON, a memory a line with its history (--server-url)
  memory import <file>
              NDJSON memories or plain text lines into a running server: idempotent by id,
              re-embedded; says what it added, skipped and refused (by line number)
  launch <agent> [--print] [-- agent args]
              run a coding agent (claude, codex, opencode, qwen, or any other installed one) pointed
              at Psyche, starting Psyche in the background when it is not running; the agent's own
              config files are left alone. --print shows the environment and config instead
  install claude-code [--project] [--http] [--dry-run] [--no-start]
              add Psyche's hooks and MCP server to Claude Code's settings (user, or this project's),
              then start Psyche in the background and wait until it answers (--no-start: don't)
  uninstall claude-code [--project] [--dry-run]
              remove exactly those, and stop the background server

Flags (each also an environment variable):
${Object.entries(ENV_NAMES)
  .map(([key, env]) => `  --${flagName(key)}`.padEnd(28) + env)
  .join("\n")}
  --family <name>             \`psyche model tiny\`: the model family (docs/models.md)
  --out <file>                where \`psyche model\` and \`psyche memory export\` write
  --embeddings                \`psyche memory export\`: each memory's vector too
  -f, --follow                \`psyche logs\`: keep printing what is appended
  --project                   \`psyche install|uninstall\`: this project's .claude/settings.json and .mcp.json
  --http                      \`psyche install\`: HTTP hooks (no process per call) but for session-start
  --dry-run                   \`psyche install|uninstall\`: show the changes, write nothing
  --no-start                  \`psyche install\`: leave the server stopped (install starts it)
  --print                     \`psyche launch\`: show the agent's environment and config, run nothing
  --help
`;

export interface ParsedArgs {
  command: Command;
  /** Positional arguments after the command. */
  rest: string[];
  /** Config keys (camelCase) from flags. */
  flags: Record<string, unknown>;
  out?: string | undefined;
  family?: string | undefined;
  help: boolean;
  follow: boolean;
  project: boolean;
  http: boolean;
  dryRun: boolean;
  noStart: boolean;
  embeddings: boolean;
  print: boolean;
}

export function parseCli(argv: string[]): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
    out: { type: "string" },
    family: { type: "string" },
    help: { type: "boolean" },
    follow: { type: "boolean", short: "f" },
    project: { type: "boolean" },
    http: { type: "boolean" },
    "dry-run": { type: "boolean" },
    "no-start": { type: "boolean" },
    embeddings: { type: "boolean" },
    print: { type: "boolean" },
  };
  for (const key of Object.keys(ENV_NAMES))
    options[flagName(key)] = { type: key === "quiet" || key === "strictParams" ? "boolean" : "string" };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${USAGE}`);
  }
  const [command, ...rest] = parsed.positionals;
  const help = parsed.values.help === true;
  if (!command && help)
    return {
      command: "serve",
      rest: [],
      flags: {},
      help,
      follow: false,
      project: false,
      http: false,
      dryRun: false,
      noStart: false,
      embeddings: false,
      print: false,
    };
  if (!command) throw new UsageError(`no command given\n\n${USAGE}`);
  if (!(COMMANDS as readonly string[]).includes(command)) throw new UsageError(`unknown command '${command}'\n\n${USAGE}`);
  const flags: Record<string, unknown> = {};
  for (const key of Object.keys(ENV_NAMES)) {
    const value = parsed.values[flagName(key)];
    if (value !== undefined) flags[key] = value;
  }
  return {
    command: command as Command,
    rest,
    flags,
    out: parsed.values.out as string | undefined,
    family: parsed.values.family as string | undefined,
    help,
    follow: parsed.values.follow === true,
    project: parsed.values.project === true,
    http: parsed.values.http === true,
    dryRun: parsed.values["dry-run"] === true,
    noStart: parsed.values["no-start"] === true,
    embeddings: parsed.values.embeddings === true,
    print: parsed.values.print === true,
  };
}

// `psyche chat` / `hermes` flags. The server is --server, else PSYCHE_SERVER_URL, else the one
// `psyche start` runs (its PID file), else the default port.
import { randomUUID } from "node:crypto";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { ConversationIdSchema } from "../conversation-id.js";
import { serverFromPidFile } from "../paths.js";

export const HERMES_USAGE = `Usage: psyche chat [flags]   (or: hermes [flags])

Talk to Psyche in the terminal; tools run here, in the workspace.

  --server URL                the Psyche server (default: PSYCHE_SERVER_URL, the running
                              \`psyche start\` server, or http://127.0.0.1:8741)
  --api-key KEY               its API key (default: PSYCHE_API_KEY)
  --workspace DIR             where tools may read, write and run (default: this directory)
  --conversation ID           continue that conversation (default: a new one, its id printed)
  -p, --print MESSAGE         send one message, run the tools, print the reply, exit
  -y, --yes                   run create_file, edit_file and execute_bash without asking
  --no-idle                   no idle exploration (default: after --idle-after seconds)
  --idle-after SECONDS        idle this long before exploring the workspace (default 120)
  --idle-cooldown SECONDS     between idle tool calls (default 20)
  --idle-tool-iterations N    tool rounds of one idle exploration (default 3)
  --idle-exclude PATTERN      also keep these files from idle exploration (gitignore syntax;
                              repeatable; secrets and ignored files are always kept out)
  --max-tool-iterations N     tool rounds per message before it must answer (default 10)
  --tool-choice auto|required|none|<tool>
                              the first request's tool_choice (default auto)
  --max-tokens N              per reply (default: the server's)
  --seed N                    sampling seed, for replies that repeat
  --bash-timeout SECONDS      execute_bash's time limit (default 60)
  --help
`;

const seconds = z.coerce.number().positive().max(86_400);
const ArgsSchema = z.object({
  server: z
    .url({ error: "--server must be a URL such as http://127.0.0.1:8741" })
    .transform((u) => u.replace(/\/+$/, "").replace(/\/v1$/, "")),
  apiKey: z.string().min(1).optional(),
  workspace: z.string().min(1),
  conversation: ConversationIdSchema,
  newConversation: z.boolean(),
  print: z.string().min(1, "-p needs a message").optional(),
  yes: z.boolean(),
  idle: z.boolean(),
  idleAfterSeconds: seconds,
  idleCooldownSeconds: z.coerce.number().min(0).max(3600),
  idleToolIterations: z.coerce.number().int().min(1).max(50),
  idleExclude: z.array(z.string().trim().min(1, "--idle-exclude needs a pattern").max(1024)).max(200),
  maxToolIterations: z.coerce.number().int().min(1).max(50),
  toolChoice: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "--tool-choice is auto, required, none or a tool's name"),
  maxTokens: z.coerce.number().int().positive().max(65_536).optional(),
  seed: z.coerce.number().int().optional(),
  bashTimeoutSeconds: seconds,
  help: z.boolean(),
});
export type HermesArgs = z.infer<typeof ArgsSchema>;

export class HermesUsageError extends Error {
  override name = "HermesUsageError";
}

export function defaultServer(env: NodeJS.ProcessEnv): string {
  if (env.PSYCHE_SERVER_URL) return env.PSYCHE_SERVER_URL;
  const found = serverFromPidFile(env.PSYCHE_DATA_DIR || join(homedir(), ".psyche"));
  if ("url" in found) return found.url;
  return `http://127.0.0.1:${env.PSYCHE_PORT || 8741}`;
}

export function parseHermesArgs(argv: readonly string[], env: NodeJS.ProcessEnv, cwd: string): HermesArgs {
  let v;
  try {
    v = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        server: { type: "string" },
        "api-key": { type: "string" },
        workspace: { type: "string" },
        conversation: { type: "string" },
        print: { type: "string", short: "p" },
        yes: { type: "boolean", short: "y" },
        idle: { type: "boolean" },
        "no-idle": { type: "boolean" },
        "idle-after": { type: "string" },
        "idle-cooldown": { type: "string" },
        "idle-tool-iterations": { type: "string" },
        "idle-exclude": { type: "string", multiple: true },
        "max-tool-iterations": { type: "string" },
        "tool-choice": { type: "string" },
        "max-tokens": { type: "string" },
        seed: { type: "string" },
        "bash-timeout": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (err) {
    throw new HermesUsageError(`${(err as Error).message}\n\n${HERMES_USAGE}`);
  }
  const parsed = ArgsSchema.safeParse({
    server: v.server ?? defaultServer(env),
    apiKey: v["api-key"] ?? (env.PSYCHE_API_KEY || undefined),
    workspace: resolve(cwd, v.workspace ?? "."),
    conversation: v.conversation ?? `hermes-${randomUUID()}`,
    newConversation: v.conversation === undefined,
    print: v.print,
    yes: v.yes === true,
    idle: v["no-idle"] !== true,
    idleAfterSeconds: v["idle-after"] ?? 120,
    idleCooldownSeconds: v["idle-cooldown"] ?? 20,
    idleToolIterations: v["idle-tool-iterations"] ?? 3,
    idleExclude: v["idle-exclude"] ?? [],
    maxToolIterations: v["max-tool-iterations"] ?? 10,
    toolChoice: v["tool-choice"] ?? "auto",
    maxTokens: v["max-tokens"],
    seed: v.seed,
    bashTimeoutSeconds: v["bash-timeout"] ?? 60,
    help: v.help === true,
  });
  if (!parsed.success)
    throw new HermesUsageError(
      parsed.error.issues.map((i) => `${i.path.length ? `${flagOf(String(i.path[0]))}: ` : ""}${i.message}`).join("\n"),
    );
  return parsed.data;
}

const FLAGS: Record<string, string> = {
  print: "-p",
  idleAfterSeconds: "--idle-after",
  idleCooldownSeconds: "--idle-cooldown",
  bashTimeoutSeconds: "--bash-timeout",
};
const flagOf = (key: string) => FLAGS[key] ?? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The first request's tool_choice, as the API takes it. */
export function toolChoiceOf(choice: string): "auto" | "required" | "none" | { type: "function"; function: { name: string } } {
  return choice === "auto" || choice === "required" || choice === "none" ? choice : { type: "function", function: { name: choice } };
}

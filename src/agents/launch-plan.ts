// How `psyche launch <agent>` points a coding agent at Psyche without touching its own config
// files: environment variables, command-line overrides, or a config file of its own in a
// temporary directory, for that one process. The agents as tested in test/e2e/coding-agents.test.ts.

export interface LaunchTarget {
  /** Psyche's base URL (no trailing slash). */
  url: string;
  /** The API key Psyche wants, where it wants one. */
  apiKey: string | undefined;
}

export interface LaunchPlan {
  /** The agent's name as its users know it. */
  name: string;
  /** The command to run (looked up on PATH, then in Psyche's own node_modules/.bin). */
  bin: string;
  /** Arguments before the user's own. */
  args: string[];
  env: Record<string, string>;
  /** Files to write in the temporary directory (name -> content); `{dir}` in env and args is that directory. */
  files: Record<string, string>;
  /** Its npm package, to say how to install it. */
  npm: string | undefined;
}

/** What keeps an agent from calling home while it runs on a local model. */
const QUIET = {
  DISABLE_TELEMETRY: "1",
  DISABLE_ERROR_REPORTING: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
};

/** A key the agent can send where Psyche wants none: agents refuse to start without one. */
const keyOf = (t: LaunchTarget) => t.apiKey ?? "psyche-local";

/** TOML's basic string: a value for codex's -c overrides. */
const toml = (s: string) => JSON.stringify(s);

const PLANS: Record<string, (t: LaunchTarget) => LaunchPlan> = {
  // Claude Code speaks Anthropic's Messages API; an auth token goes as Authorization: Bearer,
  // which Psyche takes, without Claude Code asking whether to use a custom API key.
  claude: (t) => ({
    name: "Claude Code",
    bin: "claude",
    args: [],
    env: { ...QUIET, ANTHROPIC_BASE_URL: t.url, ANTHROPIC_AUTH_TOKEN: keyOf(t) },
    files: {},
    npm: "@anthropic-ai/claude-code",
  }),
  // Codex takes its settings as -c overrides on the command line: its config.toml is left alone.
  codex: (t) => ({
    name: "Codex",
    bin: "codex",
    args: [
      "-c",
      `model_provider=${toml("psyche")}`,
      "-c",
      `model_providers.psyche.name=${toml("Psyche")}`,
      "-c",
      `model_providers.psyche.base_url=${toml(`${t.url}/v1`)}`,
      "-c",
      `model_providers.psyche.wire_api=${toml("responses")}`,
      "-c",
      `model_providers.psyche.env_key=${toml("PSYCHE_API_KEY")}`,
      // A local model needs no update check, and an offline machine would wait on it.
      "-c",
      "check_for_update_on_startup=false",
    ],
    env: { PSYCHE_API_KEY: keyOf(t) },
    files: {},
    npm: "@openai/codex",
  }),
  // OpenCode merges the file OPENCODE_CONFIG names over the user's own.
  opencode: (t) => ({
    name: "OpenCode",
    bin: "opencode",
    args: [],
    env: { OPENCODE_CONFIG: "{dir}/opencode.json", OPENCODE_DISABLE_AUTOUPDATE: "1" },
    files: {
      "opencode.json": JSON.stringify(
        {
          provider: {
            psyche: {
              npm: "@ai-sdk/openai-compatible",
              name: "Psyche",
              options: { baseURL: `${t.url}/v1`, apiKey: keyOf(t) },
              models: { psyche: { name: "Psyche" } },
            },
          },
          model: "psyche/psyche",
        },
        null,
        2,
      ),
    },
    npm: "opencode-ai",
  }),
  // Qwen Code reads an OpenAI-compatible endpoint from its environment.
  qwen: (t) => ({
    name: "Qwen Code",
    bin: "qwen",
    args: [],
    env: { OPENAI_BASE_URL: `${t.url}/v1`, OPENAI_API_KEY: keyOf(t), OPENAI_MODEL: "psyche" },
    files: {},
    npm: "@qwen-code/qwen-code",
  }),
};

/** Other names people call the agents by. */
const ALIASES: Record<string, string> = { "claude-code": "claude", "qwen-code": "qwen" };

export const KNOWN_AGENTS = Object.keys(PLANS);

/**
 * The plan for `agent`. An agent Psyche does not know is run with the environment most agents
 * read (OpenAI's and Anthropic's base URLs and keys), so that one whose npm package is installed
 * can be tried as it is.
 */
export function launchPlan(agent: string, target: LaunchTarget): LaunchPlan {
  const known = PLANS[ALIASES[agent] ?? agent];
  if (known) return known(target);
  return {
    name: agent,
    bin: agent,
    args: [],
    env: {
      ...QUIET,
      OPENAI_BASE_URL: `${target.url}/v1`,
      OPENAI_API_KEY: keyOf(target),
      ANTHROPIC_BASE_URL: target.url,
      ANTHROPIC_AUTH_TOKEN: keyOf(target),
      OLLAMA_HOST: target.url,
    },
    files: {},
    npm: undefined,
  };
}

/** The plan as a shell reads it (`psyche launch --print`): the files, the exports, the command. */
export function printPlan(plan: LaunchPlan, dir: string, userArgs: readonly string[]): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const at = (s: string) => s.replaceAll("{dir}", dir);
  const lines = [`# ${plan.name} on Psyche: run these in a shell (nothing of the agent's own configuration is changed)`];
  for (const [name, content] of Object.entries(plan.files))
    lines.push(`mkdir -p ${quote(dir)}`, `cat > ${quote(`${dir}/${name}`)} <<'EOF'`, content, "EOF");
  for (const [k, v] of Object.entries(plan.env)) lines.push(`export ${k}=${quote(at(v))}`);
  lines.push([plan.bin, ...plan.args.map(at), ...userArgs].map(quote).join(" "));
  return `${lines.join("\n")}\n`;
}

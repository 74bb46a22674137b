// `psyche launch <agent> [-- agent args]`: runs a coding agent pointed at the running Psyche
// (agents/launch-plan.ts), starting Psyche in the background first when none answers, as
// `ollama launch` does. The agent's own configuration files are never written: its settings go
// in its environment, on its command line, or in a file of a temporary directory removed when
// it exits. `--print` shows all of it instead of running.
import { spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { serverKeys, type Config } from "../config.js";
import { UserError } from "../errors.js";
import { packageRoot } from "../paths.js";
import { KNOWN_AGENTS, launchPlan, type LaunchPlan, printPlan } from "../agents/launch-plan.js";
import { daemonStatus, startDaemon } from "./daemon.js";

export interface LaunchOptions {
  print: boolean;
  /** This CLI's entry, to start the server with. */
  cli: string;
  /** The flags given to `psyche launch`, for a server it starts. */
  serveArgs: readonly string[];
  say: (line: string) => void;
}

const localUrl = (config: Config) =>
  `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${config.port}`;

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/** The running Psyche's URL: the background server's, or one answering on the configured port. */
async function runningUrl(config: Config): Promise<string | undefined> {
  const status = await daemonStatus(config);
  if (status.running && status.url && (await answers(status.url))) return status.url;
  const url = config.serverUrl?.replace(/\/+$/, "") ?? localUrl(config);
  return (await answers(url)) ? url : undefined;
}

/**
 * The running Psyche's URL, or one started in the background (`psyche start` with `serveArgs`)
 * and waited for: what `launch` and `install` leave the agent to talk to.
 */
export async function ensureServer(
  config: Config,
  o: { serveArgs: readonly string[]; cli: string; say: (line: string) => void },
): Promise<string> {
  const running = await runningUrl(config);
  if (running) return running;
  o.say("Psyche is not running: starting it in the background (a first start makes its model and database; `psyche stop` stops it)…");
  const started = await startDaemon(config, o.serveArgs, { cli: o.cli });
  o.say(`Psyche is running: ${started.url} (pid ${started.pid}, log ${started.log})`);
  return started.url;
}

/** The agent's command: on PATH, else in Psyche's own node_modules (or the agents its tests install). */
export function findAgent(bin: string, path = process.env.PATH ?? ""): string | undefined {
  const root = packageRoot();
  const dirs = [
    ...path.split(delimiter),
    join(root, "node_modules", ".bin"),
    join(root, "scripts", "coding-agents", "node_modules", ".bin"),
  ];
  for (const dir of dirs.filter(Boolean)) {
    const candidate = join(dir, bin);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const notInstalled = (plan: LaunchPlan) =>
  new UserError(
    plan.npm
      ? `${plan.name} is not installed: \`npm install -g ${plan.npm}\` (psyche launch knows ${KNOWN_AGENTS.join(", ")})`
      : `no command '${plan.bin}' on PATH: psyche launch knows ${KNOWN_AGENTS.join(", ")}, and runs any other installed agent with OpenAI's, Anthropic's and Ollama's base URLs set`,
    { exitCode: 1 },
  );

/** Runs the agent (or prints how); resolves to the exit code to leave with. */
export async function runLaunch(config: Config, agent: string, userArgs: readonly string[], o: LaunchOptions): Promise<number> {
  const apiKey = config.apiKey ?? serverKeys(config)[0]?.key;
  if (o.print) {
    const url = (await runningUrl(config)) ?? localUrl(config);
    const plan = launchPlan(agent, { url, apiKey });
    o.say(printPlan(plan, join(tmpdir(), `psyche-launch-${plan.bin}`), userArgs).trimEnd());
    return 0;
  }
  // The agent is found before anything starts: a name that is no agent starts nothing.
  const command = findAgent(launchPlan(agent, { url: "", apiKey }).bin);
  if (!command) throw notInstalled(launchPlan(agent, { url: "", apiKey }));
  const url = await ensureServer(config, o);
  const plan = launchPlan(agent, { url, apiKey });
  const dir = mkdtempSync(join(tmpdir(), "psyche-launch-"));
  try {
    for (const [name, content] of Object.entries(plan.files)) writeFileSync(join(dir, name), content, { mode: 0o600 });
    const at = (s: string) => s.replaceAll("{dir}", dir);
    const env = { ...process.env, ...Object.fromEntries(Object.entries(plan.env).map(([k, v]) => [k, at(v)])) };
    const child = spawn(command, [...plan.args.map(at), ...userArgs], { stdio: "inherit", env });
    // The terminal's Ctrl-C is the agent's to handle: it reaches it directly.
    const ignore = () => undefined;
    process.on("SIGINT", ignore);
    try {
      return await new Promise<number>((resolve, reject) => {
        child.once("error", reject);
        child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 + 2 : 1)));
      });
    } finally {
      process.off("SIGINT", ignore);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

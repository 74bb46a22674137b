#!/usr/bin/env node
// psyche <command>: see USAGE in cli-args.ts.
import { join, resolve } from "node:path";
import { loadConfig, type Config } from "./config.js";
import { UserError } from "./errors.js";
import { parseCli, UsageError, USAGE, type ParsedArgs } from "./cli-args.js";
import { downloadModel, downloadSource, localModelCopy } from "./inference/load-model.js";
import { BENCH_SHAPE, TINY_AGENT_SHAPE, TINY_SHAPE, writeRandomModel } from "./inference/random-model.js";
import { familyNamed, familyNames } from "./inference/families/families.js";
import { writeFamilyModel } from "./inference/families/family-model.js";
import { DEFAULT_EMBEDDING_MODEL } from "./memory/create-embedder.js";
import { createLogger, type Logger } from "./log.js";
import { serve } from "./processes/serve.js";
import { runDatabase } from "./processes/db.js";
import { runMigrate } from "./processes/migrate.js";
import { runWeb } from "./processes/web.js";
import { runInference } from "./processes/inference.js";
import { runMcp } from "./processes/mcp.js";
import { claimPidFile, daemonStatus, showLogs, startDaemon, stopDaemon } from "./processes/daemon.js";
import { applyChanges, planInstall, planUninstall } from "./agents/claude-code-settings.js";
import { exportCommand, importCommand, progressBar } from "./processes/memory-transfer.js";
import { ensureServer, runLaunch } from "./processes/launch.js";

const say = (line: string) => process.stdout.write(`${line}\n`);

/** Runs until SIGTERM or SIGINT, then stops what `stop` holds and exits 0. */
function untilSignal(stop: () => Promise<unknown>, log: Logger): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "stopping: no new work, settling what is in flight");
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "stop failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
}

async function run(args: ParsedArgs, config: Config, log: Logger): Promise<void> {
  switch (args.command) {
    case "serve": {
      const psyche = await serve(config, log);
      // Its own PID file, however it was started: `psyche start`, `status`, `stop` and the hooks find it.
      const release = claimPidFile(config.dataDir, psyche.url);
      if (!config.quiet) {
        say(`Psyche is listening on ${psyche.url} (OpenAI base URL: ${psyche.url}/v1, model "${config.modelId}")`);
        if (!config.databaseUrl) say(`Embedded database while this runs: psql "${psyche.databaseUrl}"`);
      }
      untilSignal(async () => {
        await psyche.stop();
        release();
      }, log);
      return;
    }
    case "start": {
      // The server gets the same flags, as given (argv after "start").
      const started = await startDaemon(config, process.argv.slice(process.argv.indexOf("start") + 1), { cli: process.argv[1]! });
      if (started.note) say(`note: ${started.note}`);
      say(`Psyche is running in the background: pid ${started.pid}, ${started.url} (log: ${started.log}; \`psyche stop\` stops it)`);
      return;
    }
    case "stop": {
      const stopped = await stopDaemon(config);
      if (stopped.note) say(`note: ${stopped.note}`);
      say(
        stopped.stopped
          ? `stopped Psyche (pid ${stopped.pid}${stopped.killed ? ", killed after the grace period" : ""})`
          : "Psyche is not running",
      );
      return;
    }
    case "status": {
      const status = await daemonStatus(config);
      if (!status.running) {
        say(`Psyche is not running${status.note ? `: ${status.note}` : ""}`);
        process.exitCode = 3;
        return;
      }
      const up = status.uptimeSeconds ?? 0;
      say(
        `Psyche is running: pid ${status.pid}, ${status.url ?? "no URL yet"}, up ${Math.floor(up / 3600)}h${Math.floor((up % 3600) / 60)}m${up % 60}s, version ${status.version}, health ${status.health}`,
      );
      return;
    }
    case "logs": {
      const stop = new AbortController();
      process.once("SIGINT", () => stop.abort());
      process.once("SIGTERM", () => stop.abort());
      await showLogs(config, (text) => process.stdout.write(text), args.follow, stop.signal);
      return;
    }
    case "db": {
      const db = await runDatabase(config, log);
      say(db.database.connectionString);
      untilSignal(db.stop, log);
      return;
    }
    case "migrate": {
      const applied = await runMigrate(config, log);
      say(applied.length ? `applied ${applied.join(", ")}` : "database is up to date");
      return;
    }
    case "web": {
      const web = await runWeb(config, log);
      if (!config.quiet) say(`Psyche web listening on ${web.server.url}`);
      untilSignal(web.stop, log);
      return;
    }
    case "inference": {
      const inference = await runInference(config, log);
      if (!config.quiet) say(`Psyche inference worker ${inference.worker.id} running`);
      untilSignal(inference.stop, log);
      return;
    }
    case "mcp": {
      await runMcp(config, log);
      return;
    }
    case "model": {
      const kind = args.rest[0];
      if (kind === "pull") {
        const uri = args.rest[1];
        if (!uri || !/^(hf:|https?:)/.test(uri))
          throw new UsageError(`psyche model pull needs an hf: URI or a URL (e.g. psyche model pull ${DEFAULT_EMBEDDING_MODEL})`);
        const local = await localModelCopy(uri, config.dataDir, config.hfEndpoint);
        if (local) {
          say(`already downloaded: ${local}`);
          return;
        }
        // Asked for by the user: a progress bar and no time limit.
        say(`downloading ${uri} from ${downloadSource(uri, config.hfEndpoint)} into ${resolve(config.dataDir, "models")}`);
        say(
          `downloaded: ${await downloadModel(uri, config.dataDir, { endpoint: config.hfEndpoint, interactive: process.stderr.isTTY === true })}`,
        );
        return;
      }
      if (kind === "tiny" && args.family !== undefined) {
        const family = familyNamed(args.family);
        if (!family) throw new UsageError(`psyche model tiny --family takes one of ${familyNames().join(", ")}; got ${args.family}`);
        if (!args.out) throw new UsageError(`psyche model tiny --family ${family.name} needs --out <file>`);
        const out = resolve(args.out);
        const started = Date.now();
        await writeFamilyModel(out, family, join(config.dataDir, "cache"));
        say(
          `wrote ${out} (${family.standsFor}: its tokenizer and chat template, random weights) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        return;
      }
      const shapes = { tiny: TINY_SHAPE, "tiny-agent": TINY_AGENT_SHAPE, bench: BENCH_SHAPE } as const;
      if (kind !== "tiny" && kind !== "tiny-agent" && kind !== "bench") {
        throw new UsageError(
          "psyche model needs a kind: tiny, tiny-agent or bench (e.g. psyche model tiny --out tiny.gguf), or pull <hf: URI>",
        );
      }
      if (!args.out) throw new UsageError(`psyche model ${kind} needs --out <file>`);
      const out = resolve(args.out);
      const started = Date.now();
      writeRandomModel(out, shapes[kind]);
      say(`wrote ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return;
    }
    case "hook":
      throw new Error("psyche hook is run by main() before the flags are parsed");
    case "chat":
      throw new Error("psyche chat is run by main() before the flags are parsed");
    case "memory": {
      const [what, file] = args.rest;
      if (what === "export") {
        const n = await exportCommand(config, { out: args.out, embeddings: args.embeddings });
        if (args.out) say(`exported ${n} ${n === 1 ? "memory" : "memories"} to ${resolve(args.out)}`);
        return;
      }
      if (what !== "import") throw new UsageError("psyche memory needs export or import (psyche memory export --out memories.ndjson)");
      if (!file) throw new UsageError("psyche memory import needs a file: NDJSON memories or plain text lines");
      const report = await importCommand(config, file, process.stderr.isTTY ? progressBar(file) : undefined);
      say(`imported ${file}: ${report.added} added, ${report.skipped} skipped (already there), ${report.refused.length} refused`);
      for (const r of report.refused.slice(0, 20)) say(`  line ${r.line}: ${r.error}`);
      if (report.refused.length > 20) say(`  ... and ${report.refused.length - 20} more`);
      if (report.refused.length) process.exitCode = 1;
      return;
    }
    case "launch": {
      const [agent, ...agentArgs] = args.rest;
      if (!agent) throw new UsageError(`psyche launch needs an agent: claude, codex, opencode, qwen, or any installed one\n\n${USAGE}`);
      const at = process.argv.indexOf("--");
      const serveArgs = process.argv
        .slice(process.argv.indexOf("launch") + 1, at === -1 ? undefined : at)
        .filter((a) => a !== agent && a !== "--print");
      process.exitCode = await runLaunch(config, agent, agentArgs, { print: args.print, cli: process.argv[1]!, serveArgs, say });
      return;
    }
    case "install":
    case "uninstall": {
      if (args.rest[0] !== "claude-code") throw new UsageError(`psyche ${args.command} needs a target: claude-code`);
      const options = {
        project: args.project ? process.cwd() : undefined,
        http: args.http,
        serverUrl: `http://${config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host}:${config.port}`,
        apiKey: config.apiKey,
      };
      const changes = args.command === "install" ? planInstall(options) : planUninstall(options);
      for (const c of changes) {
        say(`${c.path}: ${c.changed ? (args.dryRun ? "would change" : "changed") : "unchanged"}`);
        for (const note of c.notes) say(`  ${note}`);
        if (args.dryRun && c.changed) say(c.after.replace(/^/gm, "  | ").trimEnd());
      }
      if (args.dryRun) return;
      for (const backup of applyChanges(changes)) say(`backup: ${backup}`);
      if (args.command === "uninstall") {
        const stopped = await stopDaemon(config);
        say(stopped.stopped ? `stopped Psyche (pid ${stopped.pid})` : "Psyche was not running");
      } else {
        say("Claude Code picks the hooks up in its next session; session-start starts Psyche in the background when it is not running.");
        // The server gets install's own server flags (argv after the target), as `start` would.
        const serveArgs = process.argv
          .slice(process.argv.indexOf("claude-code") + 1)
          .filter((a) => !["--project", "--http", "--no-start"].includes(a));
        if (!args.noStart) await ensureServer(config, { serveArgs, cli: process.argv[1]!, say });
      }
      return;
    }
    default:
      return args.command satisfies never;
  }
}

async function main(): Promise<void> {
  let args: ParsedArgs;
  // A hook has flags of its own and must never exit non-zero (processes/hook.ts).
  if (process.argv[2] === "hook") {
    const { hookCommand } = await import("./processes/hook.js");
    return hookCommand(process.argv.slice(3));
  }
  // Hermes is a client with flags of its own (hermes/args.ts).
  if (process.argv[2] === "chat") {
    const { hermesMain } = await import("./processes/chat.js");
    await hermesMain(process.argv.slice(3));
    process.exit();
  }
  try {
    args = parseCli(process.argv.slice(2));
    if (args.help) {
      say(USAGE);
      return;
    }
  } catch (err) {
    process.stderr.write(`psyche: ${(err as Error).message}\n`);
    process.exit(2);
  }
  let config: Config;
  try {
    config = loadConfig(args.flags);
  } catch (err) {
    process.stderr.write(`psyche: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  try {
    await run(args, config, log);
  } catch (err) {
    if (err instanceof UserError) process.stderr.write(`psyche: ${err.message}\n`);
    else log.fatal({ err }, "psyche failed");
    process.exit(err instanceof UserError ? err.exitCode : 1);
  }
}

await main();

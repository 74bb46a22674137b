// The coding agents people put in front of a local model, installed from npm and run unchanged
// (scripts/install-coding-agents.sh), each in a temporary HOME, with their own switches for no
// telemetry and no updates, against a real Psyche started as `npm start` starts it: the default
// model (tiny-qwen3: Qwen3's tokenizer, template and wrapper, a 32k context), no reply ceiling below it: Claude Code over /v1/messages,
// Codex over /v1/responses, OpenCode and Qwen Code over /v1/chat/completions, Cline's CLI over
// Ollama's /api/chat; `psyche launch` runs Codex and Claude Code as a user would. Each completes a
// turn and exits 0, and the turn is Psyche's: stored, in the conversation the agent's session names.
// With Psyche's hooks installed, a memory stored beforehand reaches Claude Code's prompt, and its
// session is opened and closed in agent_sessions.
import { packageRoot } from "../../src/paths.js";
import t from "tap";
import { loadConfig } from "../../src/config.js";
import { until } from "../helpers/until.js";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startPsyche } from "../helpers/psyche.js";
import { runCli } from "../helpers/processes.js";

// Installing four agents from npm and a turn of each took 75–170 s here, and 261 s while the
// engine compiled beside it: more than the 240 s .taprc gives a file.
t.setTimeout(600_000);

const root = packageRoot();
const bin = (name: string) => join(root, "scripts/coding-agents/node_modules/.bin", name);

t.test("the agents install from npm, apart from Psyche", async (t) => {
  execFileSync("bash", [join(root, "scripts/install-coding-agents.sh")], { stdio: "inherit", timeout: 600_000 });
  t.pass("installed");
});

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs an agent with only the environment it is given (and PATH), in `cwd`. */
function runAgent(command: string, args: string[], env: Record<string, string>, cwd: string, timeoutMs = 240_000): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      done({ code, out, err });
    });
  });
}

t.test("each agent completes a turn on Psyche", async (t) => {
  // The defaults, as a user starts it: the model's own context and the default reply ceiling.
  const psyche = await startPsyche(t, { model: loadConfig({}, {}).model, contextSize: undefined, maxTokens: undefined, threads: 2 });
  const turns = async (like: string) =>
    Number(
      (
        await psyche.db.pool.query(
          "select count(*)::int as n from turns t join conversations c on c.id = t.conversation_id where c.id::text like $1 and t.status = 'done'",
          [like],
        )
      ).rows[0].n,
    );
  const allTurns = async () => Number((await psyche.db.pool.query("select count(*)::int as n from turns where status = 'done'")).rows[0].n);
  const quiet = {
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };

  t.test("Claude Code (claude -p), with Psyche's hooks: memory in, session opened and closed", async (t) => {
    const home = t.testdir();
    const project = join(home, "project");
    mkdirSync(project);
    const stored = await fetch(`${psyche.url}/v1/memories`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "The deploy key for the Quillon project lives in the vault named ferntree." }),
    });
    t.equal(stored.status, 201);
    const install = await runCli(
      ["install", "claude-code", "--project"],
      { HOME: home, PSYCHE_PORT: String(psyche.port), PSYCHE_DATA_DIR: join(home, "data") },
      project,
    );
    t.equal(install.code, 0, install.out);
    t.match(install.out, project, "into the project's own settings");
    const before = await turns("claude-code-%");
    const run = await runAgent(
      bin("claude"),
      ["-p", "Where does the Quillon deploy key live?", "--max-turns", "1"],
      { HOME: home, ANTHROPIC_BASE_URL: psyche.url, ANTHROPIC_API_KEY: "sk-local", PSYCHE_SERVER_URL: psyche.url, ...quiet },
      project,
    );
    t.equal(run.code, 0, `${run.out}\n${run.err}`);
    t.ok(run.out.trim().length > 0, "it printed the reply");
    t.ok((await turns("claude-code-%")) > before, "the turn was Psyche's, in the session's conversation");
    const said = await psyche.db.pool.query(
      "select m.content from messages m where m.conversation_id::text like 'claude-code-%' and m.content like '%ferntree%'",
    );
    t.ok(said.rows.length > 0, "the recalled memory reached the prompt Psyche's model read");
    // What the turn leaves in memory is the user's question and the reply, not the context
    // Claude Code wraps around the question (memory/turn-memory.ts).
    const kept = await until(
      "the turn's memory",
      async () => {
        const rows = await psyche.db.pool.query(
          "select content from memories where source_kind = 'turn' and conversation_id like 'claude-code-%'",
        );
        return rows.rows.length ? (rows.rows as { content: string }[]) : undefined;
      },
      30_000,
    );
    t.ok(
      kept.some((m) => m.content.includes("Where does the Quillon deploy key live?")),
      "the user's own words are kept",
    );
    t.notOk(
      kept.some((m) => m.content.includes("<system-reminder>")),
      "and none of the agent's reminders",
    );
    const sessions = await psyche.db.pool.query("select agent, project, ended_at from agent_sessions where project = $1", [project]);
    t.equal(sessions.rows.length, 1, "one session, opened by the SessionStart hook");
    t.ok(sessions.rows[0]?.ended_at, "and closed by the SessionEnd hook");
  });

  t.test("Codex (codex exec), over the Responses API", async (t) => {
    const home = t.testdir();
    mkdirSync(join(home, ".codex"));
    mkdirSync(join(home, "work"));
    writeFileSync(
      join(home, ".codex", "config.toml"),
      `model = "gpt-5-codex"\nmodel_provider = "psyche"\ncheck_for_update_on_startup = false\n\n[analytics]\nenabled = false\n\n[model_providers.psyche]\nname = "Psyche"\nbase_url = "${psyche.url}/v1"\nwire_api = "responses"\n`,
    );
    const before = await turns("codex-%");
    const run = await runAgent(
      bin("codex"),
      ["exec", "--skip-git-repo-check", "Say hello"],
      { HOME: home, CODEX_HOME: join(home, ".codex") },
      join(home, "work"),
    );
    t.equal(run.code, 0, `${run.out}\n${run.err}`);
    t.ok(run.out.trim().length > 0, "it printed the reply");
    t.ok((await turns("codex-%")) > before, "the turn was Psyche's, in the conversation Codex's session-id header names");
  });

  t.test("psyche launch: Codex and Claude Code pointed at the running Psyche, their own config files untouched", async (t) => {
    const home = t.testdir();
    const work = join(home, "work");
    mkdirSync(work);
    const env = { HOME: home, PSYCHE_PORT: String(psyche.port), PSYCHE_DATA_DIR: join(home, "data"), ...quiet };
    const codexBefore = await turns("codex-%");
    const codex = await runCli(["launch", "codex", "--", "exec", "--skip-git-repo-check", "Say hello"], env, work);
    t.equal(codex.code, 0, codex.out);
    t.ok((await turns("codex-%")) > codexBefore, "Codex's turn was Psyche's");
    t.notOk(existsSync(join(home, ".codex", "config.toml")), "Codex's config.toml was not written");
    const claudeBefore = await turns("claude-code-%");
    const claude = await runCli(["launch", "claude", "--", "-p", "Say hello", "--max-turns", "1"], env, work);
    t.equal(claude.code, 0, claude.out);
    t.ok((await turns("claude-code-%")) > claudeBefore, "Claude Code's turn was Psyche's");
    t.notOk(existsSync(join(home, ".claude", "settings.json")), "Claude Code's settings were not written");

    // --print: the environment and command, run as a user would paste them into a shell.
    const printed = await runCli(["launch", "codex", "--print", "--", "exec", "--skip-git-repo-check", "Say hello again"], env, work);
    t.equal(printed.code, 0, printed.out);
    t.match(printed.out, new RegExp(`base_url="http://127.0.0.1:${psyche.port}/v1"`), "it names the running Psyche");
    const before = await turns("codex-%");
    const pasted = await runAgent(
      "bash",
      ["-c", printed.out],
      { HOME: home, PATH: `${join(root, "scripts/coding-agents/node_modules/.bin")}:${process.env.PATH ?? ""}` },
      work,
    );
    t.equal(pasted.code, 0, `${pasted.out}\n${pasted.err}`);
    t.ok((await turns("codex-%")) > before, "the printed configuration works");
  });

  t.test("OpenCode (opencode run), as an openai-compatible provider", async (t) => {
    const home = t.testdir();
    mkdirSync(join(home, ".config", "opencode"), { recursive: true });
    mkdirSync(join(home, "work"));
    const config = {
      autoupdate: false,
      share: "disabled",
      provider: {
        psyche: {
          npm: "@ai-sdk/openai-compatible",
          name: "Psyche",
          options: { baseURL: `${psyche.url}/v1` },
          models: { psyche: { name: "Psyche" } },
        },
      },
      model: "psyche/psyche",
    };
    writeFileSync(join(home, ".config", "opencode", "opencode.json"), JSON.stringify(config));
    const before = await allTurns();
    const inSession = await turns("opencode-ses_%");
    const run = await runAgent(
      bin("opencode"),
      ["run", "Say hello"],
      { HOME: home, OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_LSP_DOWNLOAD: "1" },
      join(home, "work"),
    );
    t.equal(run.code, 0, `${run.out}\n${run.err}`);
    t.ok(run.out.trim().length > 0, "it printed the reply");
    t.ok((await allTurns()) > before, "the turn was Psyche's");
    t.ok((await turns("opencode-ses_%")) > inSession, "its session's turn, in the session's conversation (x-session-id)");
  });

  t.test("Cline's CLI (cline), over Ollama's own API", async (t) => {
    const home = t.testdir();
    const work = join(home, "work");
    mkdirSync(work);
    // Cline's own provider settings, as `cline auth` writes them, with the base URL of its Ollama provider.
    mkdirSync(join(home, ".cline", "data", "settings"), { recursive: true });
    writeFileSync(
      join(home, ".cline", "data", "settings", "providers.json"),
      JSON.stringify({
        version: 1,
        lastUsedProvider: "ollama",
        modes: {},
        providers: {
          ollama: {
            settings: { provider: "ollama", model: "llama3.2", baseUrl: psyche.url },
            updatedAt: new Date().toISOString(),
            tokenSource: "manual",
          },
        },
      }),
    );
    // Cline leaves a hub daemon behind: this install's is stopped here, whatever happens.
    t.teardown(() => {
      for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
        try {
          const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
          if (cmdline.includes("--cline-hub-daemon") && cmdline.includes(join(root, "scripts/coding-agents")))
            process.kill(Number(pid), "SIGKILL");
        } catch {
          // gone, or not ours to read
        }
      }
    });
    const chats = async () =>
      Number(
        (await (await fetch(`${psyche.url}/metrics`)).text()).match(
          /psyche_http_requests_total\{route="\/api\/chat",method="POST"[^}]*status="200"\} (\d+)/,
        )?.[1] ?? 0,
      );
    const before = await allTurns();
    const chatsBefore = await chats();
    const run = await runAgent(
      bin("cline"),
      // The provider comes from the settings (-P and -m would write them afresh, without the base URL).
      ["--plan", "-t", "200", "Say hello"],
      { HOME: home, ...quiet },
      work,
    );
    t.equal(run.code, 0, `${run.out}\n${run.err}`);
    t.ok(run.out.trim().length > 0, "it printed the reply");
    t.ok((await allTurns()) > before, "the turn was Psyche's");
    t.ok((await chats()) > chatsBefore, "through Ollama's /api/chat");
  });

  t.test("Qwen Code (qwen -p), over chat completions", async (t) => {
    const home = t.testdir();
    mkdirSync(join(home, "work"));
    const before = await allTurns();
    const run = await runAgent(
      bin("qwen"),
      ["-p", "Say hello"],
      { HOME: home, OPENAI_BASE_URL: `${psyche.url}/v1`, OPENAI_API_KEY: "sk-local", OPENAI_MODEL: "qwen3-coder-plus" },
      join(home, "work"),
    );
    t.equal(run.code, 0, `${run.out}\n${run.err}`);
    t.ok(run.out.trim().length > 0, "it printed the reply");
    t.ok((await allTurns()) > before, "the turn was Psyche's");
  });
});

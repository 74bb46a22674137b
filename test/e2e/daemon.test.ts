// psyche start / status / logs / stop as a person runs them: real processes, a real server in
// the background, its PID file (mode and content), a second start refused, a stale PID file
// (a dead pid, or a live one that is not Psyche) cleaned up and never signalled, a start that
// fails showing the log's last lines, and a foreground server's own PID file, gone when it stops.
import t from "tap";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, runCli } from "../helpers/processes.js";
import { serverDir } from "../helpers/testdir.js";
import { until } from "../helpers/until.js";

if (!existsSync(CLI)) {
  t.fail(`${CLI} is missing: run npm run build (npm test does)`);
  process.exit(1);
}

const dir = serverDir(t);
const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("PSYCHE_") && k !== "DATABASE_URL") env[k] = v;
env.PSYCHE_LOG_LEVEL = "warn";
const flags = ["--data-dir", dir, "--port", "0", "--db-port", "0", "--threads", "1"];
const cli = (...args: string[]) => runCli([...args, ...flags], env);
const pidFile = join(dir, "psyche.pid");
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
// Whatever happens, no server outlives the test.
t.teardown(async () => {
  if (existsSync(pidFile)) await cli("stop");
});

t.test("not running: status says so and exits 3; stop has nothing to do", async (t) => {
  const status = await cli("status");
  t.equal(status.code, 3, status.out);
  t.match(status.out, /not running/);
  const stop = await cli("stop");
  t.equal(stop.code, 0);
  t.match(stop.out, /not running/);
});

let pid = 0;
t.test("start returns once /health answers; the PID file is 0600 with the pid and URL; a second start is refused", async (t) => {
  const started = await cli("start");
  t.equal(started.code, 0, started.out);
  const m = /pid (\d+), (http:\/\/\S+) /.exec(started.out);
  t.ok(m, started.out);
  pid = Number(m![1]);
  const url = m![2]!;
  t.equal(statSync(pidFile).mode & 0o777, 0o600, "the PID file is 0600");
  t.match(JSON.parse(readFileSync(pidFile, "utf8")), { pid, url, version: String, started_at: String });
  const health = (await (await fetch(`${url}/health`)).json()) as { version: string };
  t.match(health.version, /^\d+\.\d+\.\d+/, "/health has the version");

  const again = await cli("start");
  t.equal(again.code, 1, "a second start fails");
  t.match(again.out, new RegExp(`already running \\(pid ${pid}`));
  t.equal(JSON.parse(readFileSync(pidFile, "utf8")).pid, pid, "the PID file still names the first");

  const status = await cli("status");
  t.equal(status.code, 0, status.out);
  t.match(
    status.out,
    new RegExp(`running: pid ${pid}, ${url.replace(/[.]/g, "\\.")}, up \\d+h\\d+m\\d+s, version \\S+, health (ok|degraded)`),
  );
  const logs = await cli("logs");
  t.equal(logs.code, 0);
  t.match(logs.out, /Psyche is listening on http/, "the server's output is in the log");
});

t.test("stop: SIGTERM, the server exits, the PID file goes", async (t) => {
  const stopped = await cli("stop");
  t.equal(stopped.code, 0, stopped.out);
  t.match(stopped.out, new RegExp(`stopped Psyche \\(pid ${pid}\\)`));
  t.notOk(alive(pid), "the server is gone");
  t.notOk(existsSync(pidFile), "the PID file is gone");
});

t.test("a stale PID file (a dead pid) is reported, then cleaned up by start", async (t) => {
  const dead = spawn(process.execPath, ["-e", ""]);
  const deadPid = dead.pid!;
  await new Promise((r) => dead.on("exit", r));
  writeFileSync(pidFile, JSON.stringify({ pid: deadPid, url: "http://127.0.0.1:1", started_at: new Date().toISOString(), version: "0" }), {
    mode: 0o600,
  });
  const status = await cli("status");
  t.equal(status.code, 3);
  t.match(status.out, /stale/);
  const started = await cli("start");
  t.equal(started.code, 0, started.out);
  t.match(started.out, new RegExp(`note: removed a stale PID file \\(pid ${deadPid} is not running\\)`));
  const stopped = await cli("stop");
  t.equal(stopped.code, 0);
});

t.test("a start that fails says why, with the log's last lines, and leaves no PID file", async (t) => {
  const failed = await runCli(["start", ...flags, "--model", join(dir, "no-such-model.gguf")], env);
  t.equal(failed.code, 1, failed.out);
  t.match(failed.out, /exited \(code \d+\) before it listened/);
  t.match(failed.out, /no-such-model\.gguf/, "the log's lines say what went wrong");
  t.notOk(existsSync(pidFile));
});

t.test("a PID file naming a live process that is not Psyche (its pid reused) is stale: never trusted or signalled", async (t) => {
  const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
  t.teardown(() => other.kill("SIGKILL"));
  writeFileSync(
    pidFile,
    JSON.stringify({ pid: other.pid, url: "http://127.0.0.1:1", started_at: new Date().toISOString(), version: "0" }),
    {
      mode: 0o600,
    },
  );
  const status = await cli("status");
  t.equal(status.code, 3, status.out);
  t.match(status.out, new RegExp(`stale \\(pid ${other.pid} is not a Psyche server`));
  const stop = await cli("stop");
  t.match(stop.out, /not running/);
  t.ok(alive(other.pid!), "the other process was not signalled");
  writeFileSync(pidFile, JSON.stringify({ pid: other.pid, url: null, started_at: new Date().toISOString(), version: "0" }), {
    mode: 0o600,
  });
  const started = await cli("start");
  t.equal(started.code, 0, started.out);
  t.match(started.out, new RegExp(`note: removed a stale PID file \\(pid ${other.pid} is not a Psyche server\\)`));
  t.equal((await cli("stop")).code, 0);
  t.ok(alive(other.pid!), "still not signalled");
});

t.test("psyche serve in the foreground writes its own PID file, and removes it when stopped by SIGTERM", async (t) => {
  const server = spawn(process.execPath, [CLI, "serve", ...flags], { env, stdio: "ignore" });
  const exited = new Promise((r) => server.once("exit", r));
  const file = await until("the server's PID file", async () => {
    if (!existsSync(pidFile)) return undefined;
    const parsed = JSON.parse(readFileSync(pidFile, "utf8")) as { pid: number; url: string | null };
    return parsed.pid === server.pid && parsed.url ? parsed : undefined;
  });
  const status = await cli("status");
  t.equal(status.code, 0, status.out);
  t.match(status.out, new RegExp(`running: pid ${server.pid}, ${file.url!.replace(/[.]/g, "\\.")}`));
  server.kill("SIGTERM");
  await exited;
  t.notOk(existsSync(pidFile), "the PID file is gone with the server");
});

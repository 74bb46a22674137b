// The installed command sizes libuv's thread pool for a server before Node first uses it
// (bin/psyche.cjs): one thread unless the user set UV_THREADPOOL_SIZE, as the server's
// "model loaded" line reports.
import t, { type Test } from "tap";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { serverDir } from "../helpers/testdir.js";

const BIN = join(packageRoot(), "bin", "psyche.cjs");

/** Starts `psyche serve` through the bin, returns the pool size its "model loaded" line reports, and stops it. */
async function threadpoolOf(t: Test, env: NodeJS.ProcessEnv): Promise<number> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--model", "tiny", "--port", "0", "--db-port", "0", "--data-dir", serverDir(t), "--log-level", "info"],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "model loaded" line in 120 s:\n${out}`)), 120_000);
      const onData = (d: Buffer) => {
        out += d.toString();
        const m = /"threadpool":(\d+)[^\n]*"model loaded"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      void exited.then((code) => reject(new Error(`psyche serve exited (${code}):\n${out}`)));
    });
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

t.test("a server started by the installed command runs with one pool thread", async (t) => {
  const { UV_THREADPOOL_SIZE: _unset, ...env } = process.env;
  t.equal(await threadpoolOf(t, env), 1);
});

t.test("unless the user chose a size", async (t) => {
  t.equal(await threadpoolOf(t, { ...process.env, UV_THREADPOOL_SIZE: "3" }), 3);
});

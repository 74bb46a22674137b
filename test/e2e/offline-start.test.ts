// Start-up never waits on the network: with a model file and a hub that takes connections and
// never answers (as a network that drops packets looks), `psyche serve` says what it tries to
// download and from where, gives up within --download-timeout-seconds, and listens with the
// built-in embedder. `psyche model pull` fetches models ahead instead.
import t from "tap";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { ensureTinyModel } from "../../src/inference/load-model.js";
import { runCli, startCli } from "../helpers/processes.js";
import { EMBEDDED_ONLY } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";

/** Accepts connections and never answers. */
const blackHole = createServer((s) => sockets.push(s));
const sockets: Socket[] = [];
await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
const hub = `http://127.0.0.1:${(blackHole.address() as { port: number }).port}/`;
t.teardown(() => {
  for (const s of sockets) s.destroy();
  blackHole.close();
});

t.test(
  "serve with a model file listens within the limit on a hub that never answers, on the built-in embedder",
  { skip: EMBEDDED_ONLY },
  async (t) => {
    const dataDir = serverDir(t);
    const model = ensureTinyModel(join(dataDir, "own")); // a .gguf file of the user's: no `tiny` shortcut
    const started = Date.now();
    const psyche = await startCli(
      [
        "serve",
        "--model",
        model,
        "--data-dir",
        dataDir,
        "--port",
        "0",
        "--db-port",
        "0",
        "--threads",
        "1",
        "--hf-endpoint",
        hub,
        "--download-timeout-seconds",
        "2",
        "--log-level",
        "info",
      ],
      {},
      /Psyche is listening on (http:\/\/\S+) /,
      // Start-up itself (the embedded database, the model) takes ~25 s beside the whole suite on
      // two cores: the limit under test is the network's part, read from the log below.
      120_000,
    );
    t.teardown(() => void psyche.child.kill("SIGKILL"));
    const out = psyche.output();
    const at = (msg: RegExp) => {
      const line = out.split("\n").find((l) => msg.test(l));
      return line ? (JSON.parse(line) as { time: number }).time : NaN;
    };
    const waited = at(/"msg":"using the built-in embedder/) - at(/"msg":"downloading hf:/);
    t.ok(
      waited >= 1_900 && waited < 10_000,
      `gave up on the hub ${waited} ms after asking it (limit 2 s), listening after ${Date.now() - started} ms`,
    );
    t.match(out, /downloading hf:ChristianAzinn\/bge-small-en-v1\.5-gguf/, "it says what it downloads");
    t.ok(out.includes(hub.replace(/\/$/, "")), "and from where");
    t.match(out, /using the built-in embedder: the default embedding model could not be had/, "and why it uses the built-in embedder");
    t.match(out, /did not finish within 2 s/);
    const models = (await (await fetch(`${psyche.match[1]}/v1/models`)).json()) as { data: { id: string }[] };
    t.ok(
      models.data.some((m) => m.id === "psyche-lexical-256"),
      "the built-in embedder serves",
    );
    // Stopped right after start: a thread still loading must not take the process down
    // (memory/thread-pool.ts). Its last words, should it exit otherwise.
    psyche.child.kill("SIGTERM");
    const exited = await psyche.exited;
    t.equal(exited, 0, "a clean exit", exited === 0 ? {} : { output: psyche.output().split("\n").slice(-40).join("\n") });
  },
);

t.test(
  "psyche model pull: a model already in the data directory is not fetched again; a bad URI is a usage error",
  { skip: EMBEDDED_ONLY },
  async (t) => {
    const dataDir = serverDir(t);
    mkdirSync(join(dataDir, "models"), { recursive: true });
    // Where node-llama-cpp keeps this URI's file once downloaded.
    writeFileSync(join(dataDir, "models", "hf_ChristianAzinn_bge-small-en-v1.5.Q8_0.gguf"), "stands in for the model");
    const pulled = await runCli(
      [
        "model",
        "pull",
        "hf:ChristianAzinn/bge-small-en-v1.5-gguf/bge-small-en-v1.5.Q8_0.gguf",
        "--data-dir",
        dataDir,
        "--hf-endpoint",
        hub,
      ],
      {},
    );
    t.equal(pulled.code, 0, pulled.out);
    t.match(pulled.out, /already downloaded: .*hf_ChristianAzinn_bge-small-en-v1\.5\.Q8_0\.gguf/);
    const bad = await runCli(["model", "pull", "not-a-uri", "--data-dir", dataDir], {});
    t.equal(bad.code, 2);
    t.match(bad.out, /psyche model pull needs an hf: URI or a URL/);
  },
);

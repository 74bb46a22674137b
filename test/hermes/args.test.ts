// `psyche chat` flags: defaults, where the server comes from, and bad values as one readable
// line each (the usage error exits 2).
import t from "tap";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HermesUsageError, parseHermesArgs, toolChoiceOf } from "../../src/hermes/args.js";

const dir = t.testdir({});
const parse = (argv: string[], env: NodeJS.ProcessEnv = { PSYCHE_DATA_DIR: dir }) => parseHermesArgs(argv, env, "/home/someone/project");

t.test("defaults: a new conversation, the current directory, idle on, ten tool rounds", async (t) => {
  const a = parse([]);
  t.match(a, {
    server: "http://127.0.0.1:8741",
    workspace: "/home/someone/project",
    newConversation: true,
    yes: false,
    idle: true,
    idleAfterSeconds: 120,
    idleCooldownSeconds: 20,
    idleToolIterations: 3,
    maxToolIterations: 10,
    toolChoice: "auto",
    bashTimeoutSeconds: 60,
  });
  t.match(a.conversation, /^hermes-[0-9a-f-]{36}$/);
  t.not(parse([]).conversation, a.conversation, "a new one per start");
});

t.test("the server: the flag, else PSYCHE_SERVER_URL, else the running daemon's PID file, else the default port", async (t) => {
  t.equal(
    parse(["--server", "http://example.test:9000/v1/"]).server,
    "http://example.test:9000",
    "an OpenAI base URL is taken as the server",
  );
  t.equal(parse([], { PSYCHE_DATA_DIR: dir, PSYCHE_SERVER_URL: "http://10.0.0.2:8741" }).server, "http://10.0.0.2:8741");
  writeFileSync(join(dir, "psyche.pid"), JSON.stringify({ pid: process.pid, url: "http://127.0.0.1:9911" }));
  t.equal(parse([]).server, "http://127.0.0.1:9911", "the PID file of a live process");
  writeFileSync(join(dir, "psyche.pid"), JSON.stringify({ pid: 2 ** 22 + 7, url: "http://127.0.0.1:9911" }));
  t.equal(parse([], { PSYCHE_DATA_DIR: dir, PSYCHE_PORT: "9000" }).server, "http://127.0.0.1:9000", "a dead pid is ignored");
});

t.test("flags as given", async (t) => {
  const a = parse([
    "-p",
    "hi",
    "-y",
    "--no-idle",
    "--conversation",
    "work.1",
    "--workspace",
    "../other",
    "--tool-choice",
    "read_file",
    "--max-tool-iterations",
    "3",
    "--seed",
    "7",
    "--api-key",
    "k",
    "--idle-tool-iterations",
    "5",
  ]);
  t.match(a, {
    print: "hi",
    yes: true,
    idle: false,
    conversation: "work.1",
    newConversation: false,
    workspace: "/home/someone/other",
    maxToolIterations: 3,
    idleToolIterations: 5,
    seed: 7,
    apiKey: "k",
  });
  t.same(toolChoiceOf(a.toolChoice), { type: "function", function: { name: "read_file" } });
  t.equal(toolChoiceOf("required"), "required");
  t.equal(parse([], { PSYCHE_DATA_DIR: dir, PSYCHE_API_KEY: "from-env" }).apiKey, "from-env");
});

t.test("bad flags: a usage error naming the flag", async (t) => {
  t.throws(() => parse(["--server", "not a url"]), { name: "HermesUsageError", message: /--server: --server must be a URL/ });
  t.throws(() => parse(["--max-tool-iterations", "0"]), /--max-tool-iterations: /);
  t.throws(() => parse(["--conversation", "has spaces"]), /--conversation: conversation ids are 1-128/);
  t.throws(() => parse(["--idle-after=-1"]), /^--idle-after: /);
  t.throws(() => parse(["--idle-tool-iterations", "0"]), /^--idle-tool-iterations: /);
  t.throws(() => parse(["--tool-choice", "a b"]), /--tool-choice/);
  t.throws(() => parse(["-p", ""]), /^-p: -p needs a message/);
  t.throws(() => parse(["--bogus"]), HermesUsageError);
  t.throws(() => parse(["stray"]), /Unexpected argument 'stray'/);
});

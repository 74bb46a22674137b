import { packageRoot } from "../src/paths.js";
import { join } from "node:path";
import t from "tap";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { ConfigError, ConfigSchema, ENV_NAMES, loadConfig, serverKeys } from "../src/config.js";
import { parseCli } from "../src/cli-args.js";

t.test("defaults", async (t) => {
  const c = loadConfig({}, {});
  t.equal(c.host, "127.0.0.1");
  t.equal(c.port, 8741);
  t.equal(c.threads, availableParallelism(), "inference threads default to the number of cores");
  t.equal(c.model, "tiny-qwen3");
  t.equal(c.databaseUrl, undefined);
  t.equal(c.decodeAhead, 16, "a chat alone decodes up to 16 steps a native call");
});

t.test("environment, then flags", async (t) => {
  const env = { PSYCHE_PORT: "9000", DATABASE_URL: "postgres://u@h:5432/db", PSYCHE_THREADS: "3" };
  const c = loadConfig({ port: "9100" }, env);
  t.equal(c.port, 9100, "a flag beats the environment");
  t.equal(c.threads, 3);
  t.equal(c.databaseUrl, "postgres://u@h:5432/db");
});

t.test("an invalid value names the flag, the variable and the value", async (t) => {
  let caught: unknown;
  try {
    loadConfig({}, { PSYCHE_PORT: "eighty" });
  } catch (err) {
    caught = err;
  }
  t.type(caught, ConfigError);
  const m = (caught as Error).message;
  t.match(m, "--port");
  t.match(m, "PSYCHE_PORT");
  t.match(m, '"eighty"');
  t.throws(() => loadConfig({ threads: "0" }, {}), /--threads \/ PSYCHE_THREADS/);
  t.throws(() => loadConfig({}, { DATABASE_URL: "not a url" }), /DATABASE_URL/);
  t.throws(() => loadConfig({ gpu: "tpu" }, {}), /--gpu/);
  t.throws(() => loadConfig({ decodeAhead: "-1" }, {}), /--decode-ahead \/ PSYCHE_DECODE_AHEAD/);
  t.throws(() => loadConfig({}, { PSYCHE_DECODE_AHEAD: "lots" }), /--decode-ahead/);
  t.throws(() => loadConfig({ decodeAhead: "1000" }, {}), /--decode-ahead/, "at most 256 steps a call");
});

t.test("listening beyond loopback requires an API key", async (t) => {
  t.throws(() => loadConfig({ host: "0.0.0.0" }, {}), /api-key/);
  t.equal(loadConfig({ host: "0.0.0.0", apiKey: "secret-key-123" }, {}).host, "0.0.0.0");
});

t.test("API keys bound to scopes: KEY or KEY=scope1,scope2, space-separated; mistakes named, keys never echoed", async (t) => {
  const config = loadConfig({ apiKey: "admin-key-000" }, { PSYCHE_API_KEYS: "alpha-key-111=/p/alpha,shared  open-key-222" });
  t.same(config.apiKeys, [
    { key: "alpha-key-111", scopes: ["/p/alpha", "shared"] },
    { key: "open-key-222", scopes: null },
  ]);
  t.same(
    serverKeys(config).map((k) => k.key),
    ["admin-key-000", "alpha-key-111", "open-key-222"],
  );
  t.equal(loadConfig({ host: "0.0.0.0", apiKeys: "alpha-key-111=/p" }, {}).host, "0.0.0.0", "bound keys alone may guard a public host");
  for (const [spec, message] of [
    ["short=/p", /key 1 must be at least 8 characters/],
    ["alpha-key-111=", /names no scope/],
    ["alpha-key-111 alpha-key-111=/p", /key 2 is given twice/],
  ] as const) {
    const err = (() => {
      try {
        loadConfig({ apiKeys: spec }, {});
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    t.match(err?.message, message, spec);
    t.notMatch(err?.message, /alpha-key-111/, "the key is not echoed");
  }
});

t.test("MCP: extra browser origins, and the server psyche mcp bridges to", async (t) => {
  t.same(loadConfig({}, {}).mcpAllowedOrigins, [], "none beyond loopback pages by default");
  t.same(loadConfig({}, { PSYCHE_MCP_ALLOWED_ORIGINS: "https://a.example, http://b.example:8080" }).mcpAllowedOrigins, [
    "https://a.example",
    "http://b.example:8080",
  ]);
  t.throws(
    () => loadConfig({ mcpAllowedOrigins: "https://a.example/path" }, {}),
    /--mcp-allowed-origins \/ PSYCHE_MCP_ALLOWED_ORIGINS.*not an origin/s,
  );
  t.throws(() => loadConfig({ mcpAllowedOrigins: "a.example" }, {}), /not an origin/);
  t.equal(loadConfig({}, { PSYCHE_SERVER_URL: "http://10.0.0.5:8741" }).serverUrl, "http://10.0.0.5:8741");
  t.throws(() => loadConfig({ serverUrl: "ftp://x.example" }, {}), /--server-url/);
});

t.test("a loaded config loads again unchanged (benchmarks and tests derive configs from one)", async (t) => {
  const c = loadConfig({}, { PSYCHE_MCP_ALLOWED_ORIGINS: "https://a.example", PSYCHE_SERVER_URL: "http://h.example:1" });
  t.same(loadConfig({ ...c }, {}), c);
});

t.test("every setting's variable is derived from its key; --sequences is gone", async (t) => {
  t.equal(ENV_NAMES.dataDir, "PSYCHE_DATA_DIR");
  t.equal(ENV_NAMES.recallWeightConversation, "PSYCHE_RECALL_WEIGHT_CONVERSATION");
  t.equal(ENV_NAMES.databaseUrl, "DATABASE_URL", "the one every Postgres tool reads");
  t.same(Object.keys(ENV_NAMES).sort(), Object.keys(ConfigSchema.shape).sort(), "one variable per setting");
  t.notOk("sequences" in ENV_NAMES, "the engine uses exactly a chat and a dream sequence");
  t.throws(() => parseCli(["serve", "--sequences", "4"]), /sequences/, "the flag is refused, not ignored");
});

t.test("the configuration table (docs/configuration.md) has a row for every setting, and none for a setting that is gone", async (t) => {
  const page = readFileSync(join(packageRoot(), "docs", "configuration.md"), "utf8");
  const section = page.slice(page.indexOf("## Configuration"));
  const rows = [...section.matchAll(/^\| `--([a-z-]+)` \| `([A-Z_]+)` \|/gm)].map((m) => [m[1], m[2]]);
  const expected = Object.entries(ENV_NAMES).map(([key, env]) => [key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), env]);
  t.same(rows.map(String).sort(), expected.map(String).sort());
});

t.test("a config file (--config, PSYCHE_CONFIG): under the environment and the flags; a bad key names itself", async (t) => {
  const { writeFileSync } = await import("node:fs");
  const dir = t.testdir();
  const file = join(dir, "psyche.json");
  writeFileSync(file, JSON.stringify({ port: 9200, "data-dir": "/srv/psyche", quiet: true, threads: 2, model: null }));
  const fromFile = loadConfig({ config: file }, {});
  t.match(fromFile, { port: 9200, dataDir: "/srv/psyche", quiet: true, threads: 2, model: "tiny-qwen3", config: file });
  t.equal(loadConfig({}, { PSYCHE_CONFIG: file }).port, 9200, "named by the environment too");
  t.equal(loadConfig({ config: file }, { PSYCHE_PORT: "9300" }).port, 9300, "the environment beats the file");
  t.equal(loadConfig({ config: file, port: "9400" }, { PSYCHE_PORT: "9300" }).port, 9400, "and a flag beats both");
  t.equal(loadConfig({ config: file }, {}).threads, 2);

  writeFileSync(file, JSON.stringify({ prot: 9200 }));
  t.throws(() => loadConfig({ config: file }, {}), { name: "ConfigError", message: /unknown setting "prot"/ });
  writeFileSync(file, JSON.stringify({ port: "eighty" }));
  t.throws(() => loadConfig({ config: file }, {}), /invalid --port \/ PSYCHE_PORT \(got "eighty"\)/, "a bad value, as a flag's would be");
  writeFileSync(file, JSON.stringify({ port: { value: 1 } }));
  t.throws(() => loadConfig({ config: file }, {}), /"port" must be a string, a number or a boolean/);
  writeFileSync(file, "{ port: 9200");
  t.throws(() => loadConfig({ config: file }, {}), /psyche\.json is not valid JSON/);
  writeFileSync(file, "[1]");
  t.throws(() => loadConfig({ config: file }, {}), /must be a JSON object of settings/);
  t.throws(() => loadConfig({ config: join(dir, "missing.json") }, {}), /cannot read .*missing\.json \(ENOENT\)/);
  t.same(parseCli(["serve", "--config", file]).flags, { config: file }, "--config is a flag like the others");
});

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Logs at the default level carry no prompt, reply, memory or tool-argument text, and no key,
// not even a refused one; the file that holds the database's process id is the owner's alone.
import t from "tap";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.js";
import { startCli } from "../helpers/processes.js";
import { until } from "../helpers/until.js";
import { EMBEDDED_ONLY } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";

t.test("a refused secret is never echoed by the configuration's error", async (t) => {
  for (const [flags, secret] of [
    [{ apiKey: "zebra1" }, "zebra1"],
    [{ databaseUrl: "not a url with hunter2 in it" }, "hunter2"],
  ] as const) {
    const err = t.throws(() => loadConfig(flags, {})) as ConfigError;
    t.ok(err instanceof ConfigError);
    t.notOk(String(err.message).includes(secret), `the message names the setting, not the value: ${err.message}`);
  }
});

t.test(
  "serve at the default log level: nothing said to it, stored in it, or refused by it reaches the log",
  { skip: EMBEDDED_ONLY },
  async (t) => {
    const dataDir = serverDir(t);
    const key = "the-right-key-0001";
    const psyche = await startCli(
      ["serve", "--data-dir", dataDir, "--port", "0", "--db-port", "0", "--threads", "1", "--api-key", key],
      { PSYCHE_LOG_LEVEL: "info" },
      /Psyche is listening on (http:\/\/\S+) /,
    );
    t.teardown(() => void psyche.child.kill("SIGKILL"));
    const url = psyche.match[1]!;
    const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const chat = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ model: "psyche", messages: [{ role: "user", content: "ZEBRAPROMPT my secret plans" }], max_tokens: 24 }),
    });
    t.equal(chat.status, 200);
    const turnId = chat.headers.get("x-psyche-turn")!;
    const reply = ((await chat.json()) as any).choices[0].message.content as string;
    t.equal(
      (
        await fetch(`${url}/v1/memories`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ content: "ZEBRAMEMORY the safe code is 4711" }),
        })
      ).status,
      201,
    );
    t.equal((await fetch(`${url}/v1/memories/search?q=ZEBRAQUERY`, { headers: { authorization: "Bearer ZEBRAWRONGKEY" } })).status, 401);
    const tool = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        model: "psyche",
        messages: [{ role: "user", content: "ZEBRATOOL call it" }],
        // The grammar cannot enforce a pattern: the random model's text breaks it.
        tools: [
          {
            type: "function",
            function: {
              name: "lookup",
              parameters: {
                type: "object",
                properties: { q: { type: "string", minLength: 20, pattern: "^ZEBRA[0-9]{40}$" } },
                required: ["q"],
              },
            },
          },
        ],
        tool_choice: "required",
      }),
    });
    t.equal(tool.status, 200, "a forced call whose arguments break the schema (a warning in the log)");
    const called = (await tool.json()) as any;
    const args = called.choices[0].message.tool_calls[0].function.arguments as string;
    t.ok(called.psyche.tool_call_problems, "the call's arguments broke the schema");
    // The turn's memory forms in the background: wait for its mood change, the last write.
    await until(
      "the turn's memory",
      async () => {
        const res = await fetch(`${url}/v1/mood?limit=5`, { headers: auth });
        return ((await res.json()) as any).history.some((h: any) => h.source_id === turnId) ? true : undefined;
      },
      30_000,
    );
    psyche.child.kill("SIGTERM");
    t.equal(await psyche.exited, 0);
    const log = psyche.output();
    t.match(log, /"level":/, "it did log");
    for (const marker of ["ZEBRAPROMPT", "ZEBRAMEMORY", "4711", "ZEBRAWRONGKEY", "ZEBRAQUERY", "ZEBRATOOL", key]) {
      t.notOk(log.includes(marker), `the log holds no ${marker}`);
    }
    if (reply.trim().length >= 12) t.notOk(log.includes(reply.trim()), "nor the reply");
    // The embedded database's password is shown once, in the psql line on stdout, and never logged.
    const password = readFileSync(join(dataDir, "pgpassword"), "utf8").trim();
    const logLines = log.split("\n").filter((line) => line.startsWith("{"));
    t.ok(logLines.length > 5);
    t.notOk(
      logLines.some((line) => line.includes(password)),
      "no log line holds the database's password",
    );
    t.match(log, new RegExp(`psql "postgresql://postgres:${password}@127\\.0\\.0\\.1:\\d+/postgres"`), "the psql line carries it");
    t.match(log, /break the tool's schema/, "the broken call was logged");
    t.notOk(log.includes(JSON.stringify(args).slice(1, -1)) || log.includes(args), "without its arguments");
    t.equal(statSync(join(dataDir, "pgdata.pid"), { throwIfNoEntry: false })?.mode, undefined, "the pid file is gone after a clean stop");
  },
);

t.test("the embedded database's pid file is mode 0600 while it runs", { skip: EMBEDDED_ONLY }, async (t) => {
  const dataDir = serverDir(t);
  const db = await startCli(["db", "--data-dir", dataDir, "--db-port", "0"], { PSYCHE_LOG_LEVEL: "warn" }, /(postgresql:\/\/\S+)/);
  t.teardown(() => void db.child.kill("SIGKILL"));
  t.equal(statSync(join(dataDir, "pgdata.pid")).mode & 0o777, 0o600);
  db.child.kill("SIGTERM");
  t.equal(await db.exited, 0);
});

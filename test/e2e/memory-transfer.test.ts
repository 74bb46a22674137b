/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Export and import, end to end: `psyche memory export` from one real server, `psyche memory
// import` into a fresh one (another data directory), export again: the same memories, with their
// histories, and the same top 10 for a set of queries. Importing again adds nothing; bad lines are
// refused by number and never stored as text.
import t from "tap";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startPsyche } from "../helpers/psyche.js";
import { CLI, runCli } from "../helpers/processes.js";
import { exportMemories } from "../../src/memory/transfer.js";

if (!existsSync(CLI)) {
  t.fail(`${CLI} is missing: run npm run build (npm test does)`);
  process.exit(1);
}

const a = await startPsyche(t, { recallPromptTokens: 0 });
const b = await startPsyche(t, { recallPromptTokens: 0 });
const dir = t.testdirName;
mkdirSync(dir, { recursive: true });

const api = async (base: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const top10 = async (base: string, q: string) =>
  ((await api(base, "GET", `/v1/memories/search?q=${encodeURIComponent(q)}&k=10`)).body.data as any[]).map((m) => m.id);
const cli = (args: string[]) => runCli(args, { PSYCHE_LOG_LEVEL: "warn", PSYCHE_DATA_DIR: join(dir, "cli") });
/** An export's memories by id, without what a search changes (last access, access count). */
const memories = (file: string) =>
  new Map(
    readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .map(({ last_accessed_at: _a, access_count: _c, ...m }: any) => [m.id, m]),
  );

const QUERIES = [
  "where does Ines live?",
  "the garden",
  "what instrument does Tomas play",
  "deadline for the report",
  "coffee",
  "Ravi on the train",
  "Mira and Porto",
];

t.test("export, import into an empty server, export again: the same memories and the same search results", async (t) => {
  const conversation = "conv-transfer-1";
  const said = [
    "Ines said she grew up in Porto and still misses the river",
    "yes, and she wants to go back for the festival in June",
    "Tomas plays the viola in the city orchestra",
  ];
  for (const content of said) await api(a.url, "POST", "/v1/memories", { content, conversation_id: conversation });
  // Enough others that the top 10 is a choice: three conversations of small talk.
  const people = ["Ines", "Tomas", "Ravi", "Mira"];
  const things = ["the garden", "coffee", "the report", "the orchestra", "Porto", "the train"];
  for (let i = 0; i < 24; i++) {
    const content = `${people[i % 4]} mentioned ${things[i % 6]} on day ${i} while talking about ${things[(i * 5 + 1) % 6]}`;
    await api(a.url, "POST", "/v1/memories", { content, conversation_id: `conv-transfer-${2 + (i % 3)}`, importance: (i % 10) / 10 });
  }
  await api(a.url, "POST", "/v1/memories", { content: "The garden needs watering twice a week in summer", tags: ["garden"] });
  const report = (await api(a.url, "POST", "/v1/memories", { content: "The quarterly report is due on Friday", importance: 0.9 })).body;
  await api(a.url, "PATCH", `/v1/memories/${report.id}`, { content: "The quarterly report is due next Monday" });
  const old = (await api(a.url, "POST", "/v1/memories", { content: "Ines lives in Lisbon", importance: 0.7 })).body;
  await api(a.url, "POST", "/v1/memories", { content: "Ines moved to Berlin for work", supersedes: [old.id] });
  const gone = (await api(a.url, "POST", "/v1/memories", { content: "Coffee beans are in the top drawer" })).body;
  await api(a.url, "DELETE", `/v1/memories/${gone.id}`);

  const first = join(dir, "first.ndjson");
  const out = await cli(["memory", "export", "--out", first, "--server-url", a.url]);
  t.equal(out.code, 0, out.out);
  t.match(out.out, /exported 31 memories/);
  const exported = memories(first);
  t.equal(exported.size, 31, "every live memory, the superseded one included, the deleted one not");
  t.notOk(exported.has(gone.id));
  t.match(exported.get(report.id), {
    content: "The quarterly report is due next Monday",
    version: 2,
    scope: "default",
    history: [
      { version: 1, content: "The quarterly report is due on Friday" },
      { version: 2, change: "corrected" },
    ],
  });
  t.match(exported.get(old.id), { superseded_by: String, history: [{ change: "created" }, { change: "superseded" }] });

  // Page by page, each memory once: small pages over the same store give the same lines.
  const paged: string[] = [];
  for await (const line of exportMemories(a.db.pool, { embeddings: false, pageSize: 4 })) paged.push(JSON.parse(line).id);
  t.same(paged, [...exported.keys()], "small pages: the same memories, once each, in order");

  const imported = await cli(["memory", "import", first, "--server-url", b.url]);
  t.equal(imported.code, 0, imported.out);
  t.match(imported.out, /31 added, 0 skipped \(already there\), 0 refused/);
  const second = join(dir, "second.ndjson");
  t.equal((await cli(["memory", "export", "--out", second, "--server-url", b.url])).code, 0);
  t.same(memories(second), exported, "the same memories, fields and histories");

  for (const q of QUERIES) t.same(await top10(b.url, q), await top10(a.url, q), `the same top 10 for "${q}"`);
  const berlin = await top10(b.url, "where does Ines live?");
  t.notOk(berlin.includes(old.id), "the superseded memory stays out of default search after the move");

  const again = await cli(["memory", "import", first, "--server-url", b.url]);
  t.match(again.out, /0 added, 31 skipped/, "idempotent by id");
  t.equal((await api(b.url, "GET", "/v1/memories/status")).body.memories.live, 31);
});

t.test("embeddings on request; plain text lines; bad lines refused by number, nothing stored as text", async (t) => {
  const res = await fetch(`${a.url}/v1/memories/export?embeddings=true`);
  t.match(res.headers.get("content-type"), /application\/x-ndjson/);
  const line = JSON.parse((await res.text()).split("\n")[0]!);
  t.equal(line.embedding.embedder, "psyche-lexical-256");
  t.equal(line.embedding.vector.length, 256);

  const notes = join(dir, "notes.txt");
  writeFileSync(
    notes,
    [
      "Call the plumber about the kitchen tap",
      "",
      '{"content": "Ines likes oat milk", "tags": ["ines"], "importance": 0.4}',
      "{not json at all",
      '{"text": "no content field"}',
      "[1, 2, 3]",
      '{"content": "A memory in no scope at all", "scope": ""}',
      '"A note that starts with a quote" is still text',
    ].join("\n"),
  );
  const before = (await api(b.url, "GET", "/v1/memories/status")).body.memories.live;
  const out = await cli(["memory", "import", notes, "--server-url", b.url]);
  t.equal(out.code, 1, "refused lines make the command fail");
  t.match(out.out, /3 added, 0 skipped \(already there\), 4 refused/);
  t.match(out.out, /line 4: not valid JSON/);
  t.match(out.out, /line 5: not a memory: content/);
  t.match(out.out, /line 6: a JSON line must be an object/);
  t.match(out.out, /line 7: not a memory: scope/);
  t.equal((await api(b.url, "GET", "/v1/memories/status")).body.memories.live, before + 3);
  const found = await top10(b.url, "plumber kitchen tap");
  t.ok(found.length > 0, "a plain line is a memory");
  const text = (await api(b.url, "GET", `/v1/memories/search?q=${encodeURIComponent("not json at all")}`)).body.data;
  t.notOk(
    text.some((m: any) => /not json/.test(m.content)),
    "a broken JSON line is not stored as text",
  );
  const twice = await cli(["memory", "import", notes, "--server-url", b.url]);
  t.match(twice.out, /0 added, 3 skipped/, "plain lines are idempotent too");

  // The API directly: line numbers start where the client says its part starts.
  const direct = await api(b.url, "POST", "/v1/memories/import?first_line=41", "one more note\n{broken");
  t.equal(direct.status, 200);
  t.same(direct.body, { object: "memory.import", added: 1, skipped: 0, refused: [{ line: 42, error: direct.body.refused[0]?.error }] });
  t.equal((await api(b.url, "POST", "/v1/memories/import?first_line=0", "x")).status, 400);
});

t.test("the CLI without a server, or a file, says so", async (t) => {
  const missing = await cli(["memory", "import", join(dir, "nope.ndjson"), "--server-url", b.url]);
  t.equal(missing.code, 1);
  t.match(missing.out, /cannot read .*nope\.ndjson: no such file/);
  const away = await cli(["memory", "export", "--server-url", "http://127.0.0.1:9"]);
  t.equal(away.code, 1);
  t.match(away.out, /no Psyche server answers at http:\/\/127\.0\.0\.1:9/);
  const usage = await cli(["memory", "copy"]);
  t.equal(usage.code, 2);
  t.match(usage.out, /export or import/);
});

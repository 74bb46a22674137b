/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of raw fetch responses */
// Every route, fuzzed (fast-check): malformed and hostile bodies, headers and query strings (wrong
// types, huge numbers, negative k, unknown fields on the strict routes, deep nesting, invalid
// UTF-8, oversized input, SQL and path fragments, unknown ids) get a 4xx in OpenAI's error shape
// and write nothing.
import t from "tap";
import fc from "fast-check";
import { startPsyche } from "../helpers/psyche.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0, bodyLimit: 20_000 });
const pool = psyche.db.pool;

const rows = async () =>
  (
    await pool.query(
      `select (select count(*) from conversations) as conversations, (select count(*) from messages) as messages, (select count(*) from turns) as turns, (select count(*) from responses) as responses,
         (select count(*) from memories) as memories, (select count(*) from dream_journal) as journal, (select count(*) from emotion_log) as moods,
         (select count(*) from pgboss.job where name in ('psyche-inference', 'psyche-memory')) as jobs, (select overrides::text || coalesce(dnd_until::text, '') from dream_settings) as settings`,
    )
  ).rows[0];

/** Hostile text: SQL and path fragments, control characters, long runs, odd Unicode. */
const hostileString = fc.oneof(
  fc.constantFrom(
    "'; drop table memories; --",
    "../../etc/passwd",
    "%00",
    "\u0000",
    "${process.exit()}",
    "<script>",
    "\\u0000",
    "🙂".repeat(3000),
  ),
  fc.string({ maxLength: 50 }),
  fc.string({ unit: "binary", maxLength: 50 }),
);
const hostileNumber = fc.oneof(fc.constantFrom(-1, 0, -1e308, 1e308, 2 ** 53 + 1, -0.5, 1.5), fc.double({ noNaN: true }), fc.integer());
const deep = fc.integer({ min: 50, max: 400 }).map((n) => {
  let v: unknown = "x";
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
  return v;
});
/** A value of any JSON type but `not` (and not null where null means "unset"). */
const wrong = (not: "string" | "number" | "array" | "object" | "boolean" | "text or list", nullable = false) =>
  fc.oneof(
    ...(not === "string" || not === "text or list" ? [] : [hostileString]),
    ...(not === "number" ? [] : [hostileNumber]),
    ...(not === "boolean" ? [] : [fc.boolean()]),
    ...(not === "array" || not === "text or list" ? [] : [fc.array(fc.jsonValue(), { maxLength: 4 })]),
    ...(not === "object" ? [] : [fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue(), { maxKeys: 4 })]),
    ...(nullable ? [] : [fc.constant(null)]),
    deep,
  );

interface Route {
  method: string;
  path: string;
  valid: Record<string, unknown>;
  fields: Record<string, "string" | "number" | "array" | "object" | "boolean" | "text or list">;
  /** Fields where null is a value (OpenAI's nullable fields; PATCH: back to the default). */
  nullable?: readonly string[];
}
/** Bodies that are valid but for one field given a value of a wrong type (or a number out of range). */
const routes: Route[] = [
  {
    method: "POST",
    path: "/v1/chat/completions",
    valid: { model: "psyche", messages: [{ role: "user", content: "hi" }], max_tokens: 2 },
    fields: { model: "string", messages: "array", max_tokens: "number", temperature: "number", stream: "boolean", tools: "array" },
    nullable: ["max_tokens", "temperature", "stream", "tools"],
  },
  {
    method: "POST",
    path: "/v1/responses",
    valid: { model: "psyche", input: "hi", max_output_tokens: 2 },
    fields: {
      model: "string",
      input: "text or list",
      max_output_tokens: "number",
      temperature: "number",
      stream: "boolean",
      tools: "array",
      previous_response_id: "string",
      instructions: "string",
      text: "object",
    },
    nullable: ["max_output_tokens", "temperature", "stream", "tools", "previous_response_id", "instructions", "text"],
  },
  {
    method: "POST",
    path: "/v1/memories",
    valid: { content: "a memory" },
    fields: { content: "string", importance: "number", tags: "array", citations: "array", conversation_id: "string", kind: "string" },
  },
  {
    method: "POST",
    path: "/v1/embeddings",
    valid: { model: "psyche", input: "hello" },
    fields: { model: "string", input: "text or list", dimensions: "number" },
  },
  {
    method: "PATCH",
    path: "/dream/config",
    valid: { dream_delay_seconds: 300 },
    fields: { dream_delay_seconds: "number", idle_thoughts: "boolean", dream_temperature: "number" },
    nullable: ["dream_delay_seconds", "idle_thoughts", "dream_temperature"],
  },
  { method: "POST", path: "/dream/dnd", valid: { duration_seconds: 10 }, fields: { duration_seconds: "number", reason: "string" } },
  {
    method: "POST",
    path: "/dream/jobs",
    valid: { kind: "reflect" },
    fields: { kind: "string", count: "number", max_tokens: "number", focus: "string" },
  },
  {
    method: "POST",
    path: "/v1/presence",
    valid: { client_id: "0b9e6f1c-5f4e-4a8e-9d52-3b1c2f7a8e10", name: "fuzz" },
    fields: { client_id: "string", name: "string" },
  },
];

async function send(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${psyche.url}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

function refused(t: any, what: string, r: { status: number; json: any }): void {
  if (r.status < 400 || r.status >= 500 || typeof r.json?.error?.message !== "string" || typeof r.json.error.type !== "string") {
    t.fail(`${what}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  }
}

t.test("bodies: one field of a wrong type, unknown fields, deep nesting", async (t) => {
  const before = await rows();
  let cases = 0;
  for (const route of routes) {
    const field = fc.constantFrom(...Object.keys(route.fields));
    await fc.assert(
      fc.asyncProperty(
        field.chain((f) => {
          const nullable = route.nullable?.includes(f) ?? false;
          return fc.tuple(
            fc.constant(f),
            route.fields[f] === "number"
              ? fc.oneof(wrong("number", nullable), fc.constantFrom(-1, 1e12, 1e308, -1e308))
              : wrong(route.fields[f]!, nullable),
          );
        }),
        async ([f, value]) => {
          // A number that happens to be in range is not hostile for a number field; nor is a
          // positive whole reply budget, however large: it is clamped to --max-tokens.
          if (
            typeof value === "number" &&
            route.fields[f] === "number" &&
            value >= 0 &&
            value <= 1 &&
            f !== "max_tokens" &&
            f !== "max_output_tokens" &&
            f !== "count"
          )
            return;
          if ((f === "max_tokens" || f === "max_output_tokens") && typeof value === "number" && Number.isInteger(value) && value > 0)
            return;
          cases++;
          const r = await send(route.method, route.path, JSON.stringify({ ...route.valid, [f]: value }));
          refused(t, `${route.method} ${route.path} ${f}=${JSON.stringify(value)?.slice(0, 60)}`, r);
        },
      ),
      { numRuns: 25, seed: 42 },
    );
    // Strict bodies refuse fields they do not know; the model APIs ignore and name them
    // (test/e2e/chat-parameters.test.ts), so they are not fuzzed for it here.
    if (route.path !== "/v1/embeddings" && route.path !== "/v1/chat/completions" && route.path !== "/v1/responses") {
      refused(
        t,
        `${route.path} unknown field`,
        await send(route.method, route.path, JSON.stringify({ ...route.valid, "; drop table x": 1 })),
      );
    }
  }
  t.ok(cases > 100, `${cases} hostile bodies`);
  t.same(await rows(), before, "nothing written for any of them");
});

t.test("raw bytes: invalid UTF-8, not JSON, not an object, oversized", async (t) => {
  const before = await rows();
  const bodies = fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b).toString("latin1")),
    fc.constantFrom("{", "[]", "null", "42", '"a string"', "\xff\xfe\xfd", '{"a":', "{}}".repeat(10), "x".repeat(30_000)),
  );
  await fc.assert(
    fc.asyncProperty(bodies, fc.constantFrom(...routes), async (body, route) => {
      refused(t, `${route.method} ${route.path} raw ${JSON.stringify(body).slice(0, 40)}`, await send(route.method, route.path, body));
    }),
    { numRuns: 80, seed: 7 },
  );
  t.same(await rows(), before, "nothing written");
});

t.test("query strings and ids: negative k, huge numbers, fragments, unknown ids", async (t) => {
  const before = await rows();
  const value = fc.oneof(hostileString, hostileNumber.map(String), fc.constantFrom("", "-1", "0", "1e9", "NaN", "abc", "2026-13-45"));
  await fc.assert(
    fc.asyncProperty(value, async (v) => {
      const q = encodeURIComponent(v);
      const k = Number(v);
      const validK = v.trim() !== "" && Number.isInteger(k) && k >= 1 && k <= 50;
      if (!validK) refused(t, `search k=${v}`, await send("GET", `/v1/memories/search?q=x&k=${q}`));
      refused(t, `journal limit=${v}`, await send("GET", `/dream/journal?limit=${q === "" ? "-1" : q}&before=${q}`));
      refused(t, `mood limit=${v}`, await send("GET", `/v1/mood?limit=${q === "" ? "-1" : q}x`));
      for (const path of [
        `/v1/memories/${q || "x"}`,
        `/v1/turns/${q || "x"}`,
        `/v1/responses/${q || "x"}`,
        `/v1/responses/${q || "x"}/input_items`,
        `/dream/jobs/${q || "x"}`,
        `/v1/models/${q || "x"}`,
      ]) {
        const r = await send("GET", path);
        if (r.status === 404 && r.json?.error) continue; // unknown ids, in the error shape
        refused(t, `GET ${path}`, r);
      }
      refused(t, `DELETE memory ${v}`, await send("DELETE", `/v1/memories/${q || "x"}`));
      refused(t, `cancel turn ${v}`, await send("POST", `/v1/turns/${q || "x"}/cancel`));
      refused(t, `DELETE response ${v}`, await send("DELETE", `/v1/responses/${q || "x"}`));
    }),
    { numRuns: 40, seed: 3 },
  );
  refused(t, "search with an empty q", await send("GET", "/v1/memories/search?q=&k=5"));
  refused(t, "search with a q over 4000 characters", await send("GET", `/v1/memories/search?q=${"a".repeat(5000)}`));
  t.same(await rows(), before, "nothing written");
});

t.test("headers: a hostile conversation id, a hostile content type", async (t) => {
  const before = await rows();
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.constantFrom("../x", "a b", "x".repeat(200), "'; drop", "é"),
        fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !/^[A-Za-z0-9._:@-]{1,128}$/.test(s) && /^[\x21-\x7e]+$/.test(s)),
      ),
      async (id) => {
        refused(
          t,
          `conversation ${id}`,
          await send("POST", "/v1/chat/completions", JSON.stringify(routes[0]!.valid), { "x-psyche-conversation": id }),
        );
      },
    ),
    { numRuns: 30, seed: 11 },
  );
  t.same(await rows(), before, "nothing written");
});

t.test("MCP: hostile JSON-RPC gets a JSON-RPC error (or an isError result), never a 5xx, and writes nothing", async (t) => {
  const before = await rows();
  const body = fc.oneof(
    wrong("object").map((v) => JSON.stringify(v)),
    fc
      .record({ jsonrpc: fc.constant("2.0"), id: fc.integer(), method: hostileString, params: fc.jsonValue() })
      .map((v) => JSON.stringify(v)),
    fc
      .record({
        jsonrpc: fc.constant("2.0"),
        id: fc.integer(),
        method: fc.constant("tools/call"),
        params: fc.record({ name: hostileString, arguments: fc.jsonValue() }),
      })
      .map((v) => JSON.stringify(v)),
    fc.uint8Array({ minLength: 1, maxLength: 100 }).map((b) => Buffer.from(b).toString("latin1")),
  );
  await fc.assert(
    fc.asyncProperty(body, async (b) => {
      const r = await send("POST", "/mcp", b, { accept: "application/json, text/event-stream" });
      const answered =
        r.status < 500 &&
        (r.status >= 400 ? r.json?.error !== undefined : r.json?.error !== undefined || r.json?.result?.isError === true || r.json === "");
      if (!answered) t.fail(`POST /mcp ${b.slice(0, 60)}: ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
    }),
    { numRuns: 60, seed: 5 },
  );
  t.same(await rows(), before, "nothing written");
});

// The presence middleware (src/http/presence.ts) on a real database: a request with the key is
// presence shortly after arrival (after its own first statement, and after its answer where that
// comes sooner) and each second while it is handled; one without the key is not, and reads of the
// dream life are not.
import t from "tap";
import { Hono } from "hono";
import { presence } from "../../src/http/presence.js";
import { createLogger } from "../../src/log.js";
import { countedPool } from "../helpers/counted-pool.js";
import { testDatabase } from "../helpers/database.js";

const db = await testDatabase(t);
const { pool, statements } = countedPool(db.pool);
const writes = () => statements.filter((s) => /update activity set last_request_at/.test(s)).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const app = new Hono();
app.use("*", presence({ pool, log: createLogger("silent"), apiKeys: [{ key: "k1", scopes: [] }] }));
app.post("/v1/slow", async (c) => {
  await sleep(2600);
  return c.json({ ok: true });
});
app.get("/dream/status", (c) => c.json({ ok: true }));
// A request whose first statement is its own, as a chat's turn stored.
app.post("/v1/store", async (c) => {
  await pool.query("select 'the request''s own statement'");
  await sleep(200);
  return c.json({ ok: true });
});
app.post("/v1/quick", (c) => c.json({ ok: true }));
const key = { authorization: "Bearer k1" };

t.test("a request handled for 2.6 s is presence on arrival and each second, not only at its end", async (t) => {
  const answered = app.request("/v1/slow", { method: "POST", headers: key });
  await sleep(100);
  t.equal(writes(), 1, "written on arrival");
  await sleep(2000);
  t.ok(writes() >= 2, `still written while it runs (${writes()} writes after 2.1 s)`);
  t.equal((await answered).status, 200);
});

t.test("without the key, or reading the dream life, it is not presence", async (t) => {
  await sleep(1100);
  const before = writes();
  t.equal((await app.request("/dream/status", { headers: key })).status, 200);
  await app.request("/v1/slow", { method: "POST", headers: { authorization: "Bearer wrong" } });
  t.equal(writes(), before, "no write for either");
});

t.test("a request's own first statement goes before its presence write; one answered at once is written after", async (t) => {
  await sleep(1100);
  const from = statements.length;
  t.equal((await app.request("/v1/store", { method: "POST", headers: key })).status, 200);
  const seen = statements.slice(from).map((s) => (/update activity/.test(s) ? "presence" : /own statement/.test(s) ? "own" : s));
  t.same(seen.slice(0, 2), ["own", "presence"], "the request's statement first (the embedded database runs one at a time)");
  await sleep(1100);
  const before = writes();
  t.equal((await app.request("/v1/quick", { method: "POST", headers: key })).status, 200);
  // A streamed chat's answer begins here, its first event's statement just after: not behind this write.
  t.equal(writes(), before, "not written as its answer begins");
  await sleep(60);
  t.equal(writes(), before + 1, "written shortly after its arrival");
  await sleep(100);
  t.equal(writes(), before + 1, "and once");
});

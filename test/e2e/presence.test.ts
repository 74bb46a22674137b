// Presence: any authenticated request counts as someone being there, for the dream delay and the
// wake lock, not chat turns alone. An agent using the memory API or MCP keeps Psyche awake;
// a refused request, or a page watching the dream life, does not; requests close together ask to
// write it once (src/http/presence.ts).
import t from "tap";
import pg from "pg";
import { startPsyche } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const KEY = "presence-key-1";
const psyche = await startPsyche(t, { apiKey: KEY, dreamDelaySeconds: 2, wakeLockSeconds: 0, recallPromptTokens: 0, dreamMaxTokens: 8 });
const pool = psyche.db.pool;
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dreams = async () => (await pool.query("select count(*)::int as n from dream_journal where kind = 'dream'")).rows[0].n as number;
// With the key: behind keys, /health without one says only how the server is.
const lastRequest = async () =>
  (
    (await (await fetch(`${psyche.url}/health`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
      last_request_at: string | null;
    }
  ).last_request_at;

t.test("an agent using memory and MCP, with no chat, keeps Psyche from dreaming", async (t) => {
  await fetch(`${psyche.url}/dream/config`, {
    method: "PATCH",
    headers: auth,
    body: JSON.stringify({ idle_thoughts: false, reflection_threshold: 0 }),
  });
  const until5s = Date.now() + 5000;
  while (Date.now() < until5s) {
    t.equal((await fetch(`${psyche.url}/v1/memories/search?q=anything`, { headers: auth })).status, 200);
    const mcp = await fetch(`${psyche.url}/mcp`, {
      method: "POST",
      headers: { ...auth, accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_mood", arguments: {} } }),
    });
    t.equal(mcp.status, 200);
    await sleep(400);
  }
  t.equal(await dreams(), 0, "five seconds of requests, with a two-second dream delay: no dream");
  const last = await lastRequest();
  t.ok(last && Date.now() - new Date(last).getTime() < 2000, "/health says when the last request came");
});

t.test("refused requests and reads of the dream life do not count; once quiet, it dreams", async (t) => {
  const before = await lastRequest();
  await sleep(1200); // past the once-a-second write
  t.equal((await fetch(`${psyche.url}/v1/memories/search?q=x`, { headers: { authorization: "Bearer wrong" } })).status, 401);
  t.equal((await fetch(`${psyche.url}/dream/status`, { headers: auth })).status, 200);
  await sleep(200);
  t.equal(await lastRequest(), before, "neither moved it");
  await until("a dream once quiet", async () => ((await dreams()) > 0 ? true : undefined), 20_000);
  t.pass("quiet for the dream delay: it dreamt");
});

t.test("requests close together ask to write presence once, not each", async (t) => {
  await sleep(1100); // past this process's last write
  const original = pg.Client.prototype.query;
  let touches = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    if (/update activity set last_request_at/.test(typeof first === "string" ? first : (first?.text ?? ""))) touches++;
    return (original as (...x: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    for (let i = 0; i < 6; i++) t.equal((await fetch(`${psyche.url}/v1/models`, { headers: auth })).status, 200);
    await sleep(100);
  } finally {
    pg.Client.prototype.query = original;
  }
  // Six requests well within two seconds: the first writes, at most one more after a second.
  t.ok(touches >= 1 && touches <= 2, `${touches} writes asked for six requests`);
  const last = await lastRequest();
  t.ok(last && Date.now() - new Date(last).getTime() < 2000, "and presence was recorded");
});

// Hermes survives the network: a stream cut in the middle of a reply, with the server out of
// reach for a while after, is resumed from the turn's stored events (GET /v1/turns/:id/events)
// once it can be reached again; the reply printed is the stored one, nothing lost or repeated.
import t from "tap";
import { createServer, connect, type Socket } from "node:net";
import { runHermes } from "../helpers/hermes.js";
import { startPsyche } from "../helpers/psyche.js";
import { serverDir } from "../helpers/testdir.js";

const psyche = await startPsyche(t, { recallPromptTokens: 0 });
const target = new URL(psyche.url);

// A TCP proxy that cuts the first event stream after some bytes, then refuses everyone for 1.5 s.
let cutAt: number | null = null;
let refusingUntil = 0;
const sockets = new Set<Socket>();
const proxy = createServer((client) => {
  if (Date.now() < refusingUntil) return client.destroy();
  const upstream = connect(Number(target.port), target.hostname);
  sockets.add(client);
  let seen = 0;
  let streaming = false;
  upstream.on("data", (d: Buffer) => {
    if (!streaming && d.toString("latin1").includes("text/event-stream")) streaming = true;
    seen += d.length;
    if (streaming && cutAt === null && seen > 1500) {
      cutAt = Date.now();
      refusingUntil = Date.now() + 1500;
      client.destroy();
      upstream.destroy();
      return;
    }
    client.write(d);
  });
  client.on("data", (d) => upstream.write(d));
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
});
await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
t.teardown(() => {
  for (const s of sockets) s.destroy();
  proxy.close();
});
const proxied = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;

t.test("a stream cut mid-reply, the server away 1.5 s: Hermes waits, resumes, and prints the whole stored reply once", async (t) => {
  const run = await runHermes(["--server", proxied, "-p", "Tell me a long story", "--max-tokens", "1000", "--seed", "3"], {
    cwd: serverDir(t),
  });
  t.equal(run.code, 0, run.stderr);
  t.ok(cutAt, "the proxy cut the stream");
  t.match(run.stderr, /the stream dropped; reconnecting\n(.|\n)*reconnected/);
  const conversation = /conversation (hermes-[0-9a-f-]+)/.exec(run.stderr)![1];
  const turn = (await psyche.db.pool.query("select content, status from turns where conversation_id = $1", [conversation])).rows[0];
  t.equal(turn.status, "done");
  t.ok(turn.content.length > 200, `a long reply (${turn.content.length} characters)`);
  t.equal(run.stdout, `${turn.content}\n`, "exactly the stored reply: nothing lost, nothing twice");
});

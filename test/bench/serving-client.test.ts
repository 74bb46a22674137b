// The bench's streaming client (bench/serving.ts) reads an OpenAI stream as it comes: text,
// the server's token count, and the time to the first token, over node:http (no body timeout:
// a cold long prompt may be read for minutes before the first token). The server here is a
// local node:http one that writes the stream's events by hand, slowly.
import t from "tap";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { pairedStreams, quartiles, streamChat } from "../../bench/serving.js";

const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`;

/** Connections that have had a request: this server takes one per connection, as a server that closed it as idle. */
const served = new WeakSet<object>();
const server = createServer((req, res) => {
  if (served.has(req.socket)) {
    req.socket.destroy();
    return;
  }
  served.add(req.socket);
  if (req.url?.includes("refuse")) {
    res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"no"}}');
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  // Silent first, as a server reading a long prompt is; then the events, split mid-event.
  setTimeout(() => {
    res.write(chunk("Hel"));
    res.write(chunk("lo").slice(0, 10));
    setTimeout(() => {
      res.write(chunk("lo").slice(10));
      res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2 } })}\n\n`);
      res.end("data: [DONE]\n\n");
    }, 50);
  }, 300);
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
t.teardown(() => server.close());
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

t.test("text, the server's counts, and the first token's time", async (t) => {
  const run = await streamChat(url, [{ role: "user", content: "hi" }], 8, 1);
  t.equal(run.text, "Hello");
  t.equal(run.tokens, 2);
  t.equal(run.promptTokens, 7);
  t.ok(run.ttftMs >= 250, `the silence before the first token counts: ${run.ttftMs.toFixed(0)} ms`);
  t.ok(run.endedAt >= run.firstAt);
});

t.test("a refusal is an error with the server's answer", async (t) => {
  await t.rejects(streamChat(`${url}/refuse`, [{ role: "user", content: "hi" }], 8, 1), /400 .*no/);
});

t.test("each request on a connection of its own: a connection the server closed is never reused", async (t) => {
  // Node 20's global agent keeps connections alive; reusing one the server has dropped fails as
  // "socket hang up" (npm run bench did, against llama-server).
  for (let i = 0; i < 3; i++) t.equal((await streamChat(url, [{ role: "user", content: "hi" }], 8, i)).text, "Hello", `request ${i + 1}`);
});

t.test("quartiles interpolate between the sorted values", async (t) => {
  t.same(quartiles([5, 1, 3]), { q1: 2, median: 3, q3: 4 });
  t.same(quartiles([4, 1, 2, 3]), { q1: 1.75, median: 2.5, q3: 3.25 });
});

t.test("paired streams: the same request to each server in turn, which goes first alternating", async (t) => {
  const seen: string[] = [];
  const answering = (name: string) =>
    createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        seen.push(`${name}:${JSON.parse(body).messages[0].content}`);
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk("a"));
        res.end(`${chunk("b")}data: [DONE]\n\n`);
      });
    });
  const servers = [answering("a"), answering("b")];
  for (const s of servers) await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  t.teardown(() => servers.forEach((s) => s.close()));
  const [a, b] = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`);
  const r = await pairedStreams(a!, b!, 3, 2);
  t.equal(seen.length, 6);
  t.same(
    seen.map((x) => x.split(":")[0]),
    ["a", "b", "b", "a", "a", "b"],
    "a first, then b first, then a first",
  );
  for (let i = 0; i < 6; i += 2) t.equal(seen[i]!.split(":")[1], seen[i + 1]!.split(":")[1], "both got the same request");
  t.ok(Number.isFinite(r.ttftDiffMs.median) && r.decodeRatio.median > 0, "a difference and a ratio per pair");
});

// The body limit (src/http/body-limit.ts) on a real server: a body over the limit is refused
// whether it says its length or is sent in chunks, one within it reaches the handler whole, and
// a body with a length is read without building a WHATWG Request (what the middleware is for).
import t from "tap";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { bodyLimit } from "../../src/http/body-limit.js";

const LIMIT = 1000;
const app = new Hono();
app.use(
  "*",
  bodyLimit(LIMIT, (c) => {
    throw new Error(`over the limit at ${c.req.path}`);
  }),
);
app.onError((err, c) => c.text(err.message, 413));
app.post("/echo", async (c) => {
  const text = await c.req.text();
  // @hono/node-server's request stands in for a WHATWG Request until one is asked for.
  const built = Object.getOwnPropertySymbols(c.req.raw).some((s) => s.description === "requestCache");
  return c.json({ length: text.length, built });
});
app.get("/echo", (c) => c.json({ get: true }));

const server = createAdaptorServer({ fetch: app.fetch });
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
const port = (server.address() as AddressInfo).port;

/** POSTs `body`, with its length or in chunks; the status and the answer. */
function post(body: string, chunked: boolean): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = chunked
      ? { "transfer-encoding": "chunked" }
      : { "content-length": Buffer.byteLength(body) };
    const req = request({ host: "127.0.0.1", port, path: "/echo", method: "POST", headers }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    if (chunked) for (let i = 0; i < body.length; i += 100) req.write(body.slice(i, i + 100));
    else req.write(body);
    req.end();
  });
}

t.test("a body with its length", async (t) => {
  const within = await post("x".repeat(LIMIT), false);
  t.equal(within.status, 200);
  t.same(JSON.parse(within.text), { length: LIMIT, built: false }, "read whole, from Node's stream");
  const over = await post("x".repeat(LIMIT + 1), false);
  t.equal(over.status, 413);
  t.equal(over.text, "over the limit at /echo");
});

t.test("a body in chunks is counted", async (t) => {
  const within = await post("y".repeat(LIMIT - 10), true);
  t.equal(within.status, 200);
  t.equal(JSON.parse(within.text).length, LIMIT - 10);
  const over = await post("y".repeat(LIMIT * 3), true);
  t.equal(over.status, 413);
});

t.test("a GET has no body to limit", async (t) => {
  const res = await fetch(`http://127.0.0.1:${port}/echo`);
  t.same(await res.json(), { get: true });
});

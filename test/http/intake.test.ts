// The intake (src/http/intake.ts) on a real server: four requests whose connections are all
// waiting when the server's thread next looks are all read before the first handler runs (Node
// accepts one connection a turn, and a handler's work would come between them); a lone request
// is answered; a stream of arrivals that never pauses holds a request no longer than the wait's cap.
import t, { type Test } from "tap";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { EventEmitter } from "node:events";
import { Worker } from "node:worker_threads";
import { Intake } from "../../src/http/intake.js";

/** A server whose handlers wait for the intake, then take 3 ms of the thread each (a chat's work), recording the order. */
async function recordingServer(t: Test) {
  const order: string[] = [];
  let reads = 0;
  let runs = 0;
  const server = createServer();
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    order.push(`read ${++reads}`);
    void intake.settled().then(() => {
      order.push(`ran ${++runs}`);
      const until = performance.now() + 3;
      while (performance.now() < until);
      res.end("ok");
    });
  });
  const intake = new Intake(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { order, port: (server.address() as AddressInfo).port };
}

// Connects `count` sockets, writes a GET on each, reads each answer, and posts them; sets the
// shared flag once every request is written, so the server's thread (asleep on it) wakes to
// find all of them waiting.
const CLIENT = `
const { workerData, parentPort } = require("node:worker_threads");
const net = require("node:net");
const { port, count, flag } = workerData;
const answers = [];
let written = 0;
for (let i = 0; i < count; i++) {
  const s = net.connect(port, "127.0.0.1", () => {
    s.write("GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n", () => {
      if (++written === count) { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); }
    });
  });
  let text = "";
  s.on("data", (d) => (text += d));
  s.on("end", () => { answers.push(text); if (answers.length === count) parentPort.postMessage(answers); });
}
`;

t.test("a burst is read whole before any handler runs", async (t) => {
  const { order, port } = await recordingServer(t);
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(CLIENT, { eval: true, workerData: { port, count: 4, flag } });
  t.teardown(() => worker.terminate());
  const answered = new Promise<string[]>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  // Asleep until all four are written: the server's next turn finds four connections waiting.
  t.equal(Atomics.wait(flag, 0, 0, 10_000), "ok", "the client wrote its four requests");
  const answers = await answered;
  t.equal(answers.length, 4);
  for (const a of answers) t.match(a, /^HTTP\/1\.1 200 OK[\s\S]*ok$/);
  t.same(order.slice(0, 4), ["read 1", "read 2", "read 3", "read 4"], `all read before the first ran: ${order.join(", ")}`);
});

t.test("a lone request is answered", async (t) => {
  const { order, port } = await recordingServer(t);
  const res = await fetch(`http://127.0.0.1:${port}/`);
  t.equal(await res.text(), "ok");
  t.same(order, ["read 1", "ran 1"]);
});

t.test("arrivals that never pause hold a request no longer than the cap", async (t) => {
  const server = new EventEmitter();
  const intake = new Intake(server, 20);
  let arriving = true;
  const arrive = () => {
    server.emit("connection");
    if (arriving) setImmediate(arrive);
  };
  arrive();
  const started = performance.now();
  await intake.settled();
  const waited = performance.now() - started;
  arriving = false;
  t.ok(waited >= 20, `held while they kept coming (${waited.toFixed(1)} ms)`);
});

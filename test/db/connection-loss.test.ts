// A database connection reset in the middle of a transaction: the transaction's query rejects
// with a connection error, and the process lives on (an 'error' event on a checked-out client
// with no listener used to crash the inference worker, test/e2e/database-restart.test.ts).
import t from "tap";
import net from "node:net";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { createPool, inTransaction } from "../../src/db/pool.js";
import { isConnectionError } from "../../src/db/errors.js";
import { seededDir } from "../helpers/db-template.js";

const db = await startEmbeddedDatabase({ dataDir: await seededDir(t), port: 0 });
t.teardown(() => db.stop());

/** A relay in front of the database whose connections can be reset, as a killed server's are. */
function relay(target: URL): Promise<{ url: string; reset(): void; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const url = new URL(target);
      url.port = String((server.address() as net.AddressInfo).port);
      resolve({
        url: url.toString(),
        reset: () => {
          for (const s of sockets) s.resetAndDestroy();
        },
        close: () => server.close(),
      });
    }),
  );
}

t.test("a connection reset mid-transaction rejects its query and the process lives on", async (t) => {
  const proxy = await relay(new URL(db.connectionString));
  t.teardown(() => proxy.close());
  const pool = createPool(proxy.url, 2);
  t.teardown(() => pool.end().catch(() => undefined));
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on("uncaughtException", onUncaught);
  t.teardown(() => process.off("uncaughtException", onUncaught));

  const err = await inTransaction(pool, async (client) => {
    await client.query("select 1");
    proxy.reset();
    // Between queries, as a transaction waits on other work: the socket's error comes now.
    await new Promise((r) => setTimeout(r, 200));
    return client.query("select 2");
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err, "the transaction failed");
  t.ok(isConnectionError(err), `a connection error: ${String(err)}`);
  await new Promise((r) => setTimeout(r, 100));
  t.same(uncaught, [], "no uncaught error");
  // The pool connects again for the next query.
  t.equal((await pool.query("select 3 as n")).rows[0].n, 3);
});

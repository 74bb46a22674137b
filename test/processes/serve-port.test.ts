// A taken port is said before anything slow starts: serve checks it before the embedded
// database and the model, with the same words listen uses, and leaves nothing behind.
import t, { type Test } from "tap";
import { existsSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { ensurePortFree, PortInUseError } from "../../src/http/server.js";
import { createLogger } from "../../src/log.js";
import { serve } from "../../src/processes/serve.js";
import { testConfig } from "../helpers/psyche.js";
import { serverDir } from "../helpers/testdir.js";

async function occupied(t: Test): Promise<number> {
  const other = createServer();
  await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  t.teardown(() => new Promise<void>((resolve) => other.close(() => resolve())));
  return (other.address() as AddressInfo).port;
}

t.test("ensurePortFree: a taken port is refused, a free one and 0 pass and stay free", async (t) => {
  const port = await occupied(t);
  await t.rejects(
    ensurePortFree("127.0.0.1", port),
    new PortInUseError(`port ${port} is in use: pass --port (0 picks a free one) or stop the other server`),
  );
  await ensurePortFree("127.0.0.1", 0);
  const free = createServer();
  await new Promise<void>((resolve) => free.listen(0, "127.0.0.1", resolve));
  const freePort = (free.address() as AddressInfo).port;
  await new Promise<void>((resolve) => free.close(() => resolve()));
  await ensurePortFree("127.0.0.1", freePort);
  await ensurePortFree("127.0.0.1", freePort);
  t.pass("a free port is left free: asking twice passes");
});

t.test("serve on a taken port fails before it starts the database", async (t) => {
  const port = await occupied(t);
  const dir = serverDir(t);
  const config = testConfig(dir, { port, host: "127.0.0.1" });
  await t.rejects(serve(config, createLogger("silent")), { name: "PortInUseError", message: new RegExp(`port ${port} is in use`) });
  t.notOk(existsSync(join(dir, "pgdata")), "no database was started");
});

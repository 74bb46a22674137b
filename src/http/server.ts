// Real HTTP on a real port, with the errors a person can act on.
import { createAdaptorServer } from "@hono/node-server";
import { type AddressInfo, createServer } from "node:net";
import type { Hono } from "hono";
import { UserError } from "../errors.js";
import { Intake } from "./intake.js";

export class PortInUseError extends UserError {
  override name = "PortInUseError";
}

export interface RunningServer {
  port: number;
  url: string;
  /** Stops accepting connections; waits up to `graceMs` for open requests, then closes them. */
  close(graceMs: number): Promise<void>;
}

const portInUse = (port: number) => new PortInUseError(`port ${port} is in use: pass --port (0 picks a free one) or stop the other server`);

/**
 * Fails at once, with listen's own error, when `port` is taken: `psyche serve` asks before it
 * starts the database and loads the model (seconds to minutes), not after. A port taken in
 * between still fails listen itself. Port 0 is always free.
 */
export async function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", (err: NodeJS.ErrnoException) => reject(err.code === "EADDRINUSE" ? portInUse(port) : err));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

export async function listen(app: Hono, host: string, port: number): Promise<RunningServer> {
  // Each request waits until a burst arriving with it has been read (http/intake.ts); the
  // server is made first, as the intake counts its connections and requests.
  const server = createAdaptorServer({
    fetch: async (request: Request, env: unknown) => {
      await intake.settled();
      return app.fetch(request, env);
    },
  });
  const intake = new Intake(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EADDRINUSE") reject(portInUse(port));
      else reject(err);
    });
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return {
    port: actual,
    url: `http://${shownHost}:${actual}`,
    close: (graceMs) =>
      new Promise<void>((resolve) => {
        const s = server as unknown as { close(cb: () => void): void; closeIdleConnections?(): void; closeAllConnections?(): void };
        const timer = setTimeout(() => s.closeAllConnections?.(), graceMs);
        s.close(() => {
          clearTimeout(timer);
          resolve();
        });
        s.closeIdleConnections?.();
      }),
  };
}

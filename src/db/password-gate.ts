// The embedded database's front door. pglite-socket answers every connection without asking
// who it is, so on a shared machine any local user could read every memory with psql. Psyche
// therefore listens on the TCP port itself, asks each connection for the password (MD5
// authentication, which psql, pg and pg-boss all speak), and only then joins it to pglite-socket,
// which listens on a Unix socket in a directory only this user can enter (db/embedded.ts).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** A client that has not finished logging in by then is dropped. */
const LOGIN_TIMEOUT_MS = 10_000;
/** Bigger first messages than this are not a Postgres client's. */
const MAX_LOGIN_MESSAGE = 10_000;

export interface PasswordGateOptions {
  host: string;
  port: number;
  password: string;
  /** The Unix socket pglite-socket listens on. */
  target: string;
}

export interface PasswordGate {
  port: number;
  close(): Promise<void>;
}

const md5 = (s: string | Buffer) => createHash("md5").update(s).digest("hex");

/** What a client that knows `password` sends for `user` and `salt` (the protocol's MD5 scheme). */
export function md5Answer(password: string, user: string, salt: Buffer): string {
  return "md5" + md5(Buffer.concat([Buffer.from(md5(password + user)), salt]));
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.concat([Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0`), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

function startupParams(packet: Buffer): Map<string, string> {
  const parts = packet.subarray(8).toString("utf8").split("\0");
  const params = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) params.set(parts[i]!, parts[i + 1]!);
  return params;
}

/** Handles one connection: the login here, then everything else straight to pglite-socket. */
function admit(client: Socket, o: PasswordGateOptions, open: Set<Socket>): void {
  open.add(client);
  client.on("close", () => open.delete(client));
  client.on("error", () => client.destroy());
  client.setTimeout(LOGIN_TIMEOUT_MS, () => client.destroy());
  let buffered = Buffer.alloc(0);
  let startup: Buffer | undefined;
  let user = "";
  const salt = randomBytes(4);
  const refuse = (code: string, message: string) => {
    client.off("data", onData);
    client.end(errorResponse(code, message));
  };

  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (!startup) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (length < 8 || length > MAX_LOGIN_MESSAGE) return refuse("08P01", "invalid startup packet");
        if (buffered.length < length) return;
        const code = buffered.readInt32BE(4);
        const packet = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          // Neither: the client goes on in plain text, on loopback.
          client.write("N");
          continue;
        }
        if (code === CANCEL_REQUEST) return void client.end();
        if (code !== PROTOCOL_3) return refuse("0A000", "unsupported frontend protocol");
        startup = Buffer.from(packet);
        user = startupParams(startup).get("user") ?? "";
        const ask = Buffer.alloc(13);
        ask.write("R", 0);
        ask.writeInt32BE(12, 1);
        ask.writeInt32BE(5, 5); // AuthenticationMD5Password
        salt.copy(ask, 9);
        client.write(ask);
        continue;
      }
      if (buffered.length < 5) return;
      const length = buffered.readInt32BE(1);
      if (buffered[0] !== 0x70 /* 'p' */ || length < 4 || length > MAX_LOGIN_MESSAGE) return refuse("08P01", "expected a password message");
      if (buffered.length < length + 1) return;
      const given = Buffer.from(
        buffered
          .subarray(5, length + 1)
          .toString("utf8")
          .replace(/\0$/, ""),
      );
      const rest = buffered.subarray(length + 1);
      const expected = Buffer.from(md5Answer(o.password, user, salt));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return refuse("28P01", `password authentication failed for user "${user}"`);
      }
      client.off("data", onData);
      client.setTimeout(0);
      join(client, startup, rest, o.target, open);
      return;
    }
  };
  client.on("data", onData);
}

/** Joins an admitted client to pglite-socket: the startup packet first, then both ways as bytes. */
function join(client: Socket, startup: Buffer, rest: Buffer, target: string, open: Set<Socket>): void {
  client.pause();
  const backend = connect(target);
  open.add(backend);
  backend.on("close", () => {
    open.delete(backend);
    client.destroy();
  });
  backend.on("error", () => backend.destroy());
  client.on("close", () => backend.destroy());
  backend.on("connect", () => {
    backend.write(startup);
    if (rest.length) backend.write(rest);
    client.pipe(backend);
    backend.pipe(client);
    client.resume();
  });
}

export async function startPasswordGate(o: PasswordGateOptions): Promise<PasswordGate> {
  const open = new Set<Socket>();
  const server: Server = createServer((socket) => admit(socket, o, open));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : o.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// What db/embedded.ts and the embedded database's thread (workers/threads/embedded-database.ts)
// say to each other: the thread's start-up data, its reports, and the one request it takes.
import { z } from "zod";

export const DatabaseThreadDataSchema = z.object({
  /** PGlite's directory (`<dataDir>/pgdata`). */
  dir: z.string().min(1),
  /** pglite-socket's Unix socket, in a directory only this user can enter. */
  socketPath: z.string().min(1),
  maxConnections: z.number().int().positive(),
  /** The password gate's TCP address (db/password-gate.ts); port 0 picks a free one. */
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  password: z.string().min(1),
});
export type DatabaseThreadData = z.infer<typeof DatabaseThreadDataSchema>;

export const DatabaseThreadReportSchema = z.discriminatedUnion("kind", [
  /** Listening: the gate's port. */
  z.object({ kind: z.literal("ready"), port: z.number().int().positive() }),
  /** It could not start, having closed what it opened; `code` is the error's (EADDRINUSE). */
  z.object({ kind: z.literal("failed"), message: z.string(), code: z.string().optional() }),
  /** Stopped on request: the gate and the socket closed, PGlite closed (its files written); an error where closing failed. */
  z.object({ kind: z.literal("stopped"), error: z.string().optional() }),
]);
export type DatabaseThreadReport = z.infer<typeof DatabaseThreadReportSchema>;

export const DatabaseThreadRequestSchema = z.object({ kind: z.literal("stop") });
export type DatabaseThreadRequest = z.infer<typeof DatabaseThreadRequestSchema>;

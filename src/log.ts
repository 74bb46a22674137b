import { pino, type Logger } from "pino";

export type { Logger };

/** Structured logs to stderr, so stdout stays for what a command prints for people. */
export function createLogger(level: string, name = "psyche"): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination(2));
}

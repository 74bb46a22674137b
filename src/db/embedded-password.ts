// The embedded database's password: made once, kept in the data directory where only this user
// can read it (0600), and read by every process that shares the directory (db/password-gate.ts).
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";

export const PASSWORD_FILE = "pgpassword";

/** The password in `<dataDir>/pgpassword`, made (URL-safe, 192 bits) if there is none yet. */
export function embeddedPassword(dataDir: string): string {
  const path = join(dataDir, PASSWORD_FILE);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(path, randomBytes(24).toString("base64url") + "\n", { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    // Made by hand or by an older copy with a looser mode: the owner's alone from now on.
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
  const password = readFileSync(path, "utf8").trim();
  if (!password) throw new Error(`${path} is empty: delete it and Psyche makes a new password`);
  return password;
}

/** The embedded database's address for `password`, as pg, pg-boss and psql take it. */
export function embeddedUrl(host: string, port: number, password: string): string {
  return `postgresql://postgres:${encodeURIComponent(password)}@${host}:${port}/postgres`;
}

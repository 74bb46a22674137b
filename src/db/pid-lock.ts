import { readFileSync, unlinkSync, writeFileSync } from "node:fs";

export interface PidLock {
  release(): void;
}

/** Whether a process with this pid runs on this machine. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Paths this process holds: its own pid in a file does not make it free. */
const heldHere = new Set<string>();

/** A PID file: taken when absent or left by a dead process; refused while its holder lives. */
export function acquirePidLock(path: string): PidLock {
  if (heldHere.has(path)) throw Object.assign(new Error(`locked by this process`), { holderPid: process.pid });
  try {
    // 0600: a process id is no one else's business on a shared machine.
    writeFileSync(path, String(process.pid), { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const holderPid = Number(readFileSync(path, "utf8").trim());
    if (Number.isInteger(holderPid) && holderPid > 0 && holderPid !== process.pid && processAlive(holderPid)) {
      throw Object.assign(new Error(`locked by process ${holderPid}`), { holderPid });
    }
    writeFileSync(path, String(process.pid), { mode: 0o600 });
  }
  heldHere.add(path);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      try {
        if (readFileSync(path, "utf8").trim() === String(process.pid)) unlinkSync(path);
      } catch {
        // already gone
      }
    },
  };
}

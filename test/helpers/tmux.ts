// Hermes in a real terminal (tmux: send-keys and capture-pane), for the TUI tests. Without tmux
// a file that uses it is skipped; `npm run test:browser` installs Debian's tmux and requires it.
import type { Test } from "tap";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { PSYCHE_BIN } from "./hermes.js";
import { until } from "./until.js";

export interface HermesTerminal {
  tmux: (...args: string[]) => string;
  pane: () => string;
  waitPane: (what: string, test: (text: string) => boolean, ms?: number) => Promise<true>;
  alive: () => boolean;
  /** Starts Hermes in a fresh tmux session named hermes, 110x40, with a clean environment. */
  startHermesAt: (url: string, workspace: string, ...flags: string[]) => void;
}

/** A tmux server of the test's own; undefined (the file planned as skipped) when there is no tmux. */
export function hermesTerminal(t: Test): HermesTerminal | undefined {
  const tmuxPath = ["/usr/bin/tmux", "/bin/tmux"].find((p) => existsSync(p));
  if (!tmuxPath) {
    if (process.env.PSYCHE_TEST_TMUX === "required") throw new Error("no tmux: install Debian's tmux (npm run test:browser does)");
    t.plan(0, "no tmux; npm run test:browser installs it and runs this test");
    return undefined;
  }
  const socket = `psyche-test-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync(tmuxPath, ["-L", socket, ...args], { encoding: "utf8" });
  t.teardown(() => {
    try {
      tmux("kill-server");
    } catch {
      /* no server left */
    }
  });
  const pane = () => tmux("capture-pane", "-p", "-t", "hermes", "-S", "-200");
  const alive = () => {
    try {
      tmux("has-session", "-t", "hermes");
      return true;
    } catch {
      return false;
    }
  };
  return {
    tmux,
    pane,
    alive,
    // On a time-out the error holds the screen as it was (a long path once wrapped what a wait looked for).
    waitPane: (what, test, ms = 30_000) =>
      until(
        what,
        async () => (test(pane()) ? true : undefined),
        ms,
        async () => `the screen:\n${pane()}`,
      ),
    startHermesAt: (url, workspace, ...flags) => {
      if (alive()) tmux("kill-session", "-t", "hermes");
      const command = [process.execPath, PSYCHE_BIN, "chat", "--server", url, "--workspace", workspace, "--max-tokens", "1000", ...flags]
        .map((a) => `'${a}'`)
        .join(" ");
      tmux(
        "new-session",
        "-d",
        "-s",
        "hermes",
        "-x",
        "110",
        "-y",
        "40",
        `env -i PATH=${process.env.PATH} HOME=${process.env.HOME} TERM=xterm-256color ${command}`,
      );
    },
  };
}

export const squash = (s: string) => s.replace(/\s+/g, "");

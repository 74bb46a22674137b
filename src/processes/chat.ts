// Hermes, Psyche's terminal client (`psyche chat`, or `hermes`): parses its flags, then print
// mode or the terminal UI. It loads no model and no database driver: it talks to a server.
import { HERMES_USAGE, HermesUsageError, parseHermesArgs, type HermesArgs } from "../hermes/args.js";
import { printMode } from "../hermes/print-mode.js";
import { HermesSession } from "../hermes/session.js";

export async function hermesMain(argv: readonly string[]): Promise<void> {
  let args: HermesArgs;
  let session: HermesSession;
  try {
    args = parseHermesArgs(argv, process.env, process.cwd());
    if (args.help) {
      process.stdout.write(HERMES_USAGE);
      return;
    }
    session = new HermesSession(args);
  } catch (err) {
    process.stderr.write(`hermes: ${(err as Error).message}\n`);
    process.exit(err instanceof HermesUsageError ? 2 : 1);
  }
  if (args.print !== undefined) {
    process.exitCode = await printMode(session, args.print);
    return;
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    process.stderr.write('hermes: the conversation UI needs a terminal; use -p "message" to send one message from a script\n');
    process.exit(2);
  }
  const { runUi } = await import("../hermes/ui.js");
  process.exitCode = await runUi(session);
}

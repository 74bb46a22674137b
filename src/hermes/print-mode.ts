// `psyche chat -p "message"`: one message through the tool loop; the final reply on stdout, the
// tool activity on stderr. Without --yes the tools that change things are declined: there is
// no one to ask.
import type { HermesSession } from "./session.js";
import { explain } from "./server.js";

export async function printMode(session: HermesSession, message: string): Promise<number> {
  const err = (line: string) => process.stderr.write(`${line}\n`);
  session.setConfirm(async (name) => {
    err(`hermes: declined ${name} (print mode asks no one: pass --yes to allow it)`);
    return false;
  });
  const stop = new AbortController();
  const onSignal = () => void session.cancel().finally(() => stop.abort());
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await session.open();
    if (session.args.newConversation) err(`hermes: conversation ${session.args.conversation}`);
    const result = await session.ask(message, stop.signal, {
      onTool: (a) => {
        if (a.state !== "running") err(`hermes: tool ${a.call.name} ${a.call.arguments} ${a.state} (${Math.round(a.ms ?? 0)} ms)`);
      },
      onReconnecting: (on) => err(on ? "hermes: the stream dropped; reconnecting" : "hermes: reconnected"),
    });
    process.stdout.write(`${result.reply.content}${result.reply.content.endsWith("\n") ? "" : "\n"}`);
    if (result.exhausted) err(`hermes: stopped after ${session.args.maxToolIterations} tool rounds`);
    return 0;
  } catch (e) {
    err(`hermes: ${explain(e, session.server.url)}`);
    return 1;
  } finally {
    await session.close();
  }
}

// The terminal UI (Ink): the conversation above, the reply in progress with a line per tool
// call, the input, and a status bar with the mood and the dream state. Ctrl-C cancels a reply
// in progress, a second one quits; idle exploration starts after --idle-after seconds without
// a key and stops at the next one. Written with createElement, so the build needs no JSX step.
import { createElement as h, useCallback, useEffect, useRef, useState, type ReactElement } from "react";
import { Box, render, Static, Text, useApp, useInput } from "ink";
import type { LoopResult, ToolActivity } from "./react-loop.js";
import { explain } from "./server.js";
import type { HermesSession, Status } from "./session.js";
import { runSlash } from "./slash-commands.js";
import type { ToolName } from "./tools.js";

type Segment = { kind: "text"; text: string } | { kind: "tool"; activity: ToolActivity };
interface Entry {
  id: number;
  kind: "user" | "reply" | "idle" | "info" | "error";
  segments: Segment[];
}
interface Asking {
  name: ToolName;
  args: Record<string, unknown>;
  answer: (yes: boolean) => void;
}

let nextId = 0;
const entry = (kind: Entry["kind"], text: string): Entry => ({ id: nextId++, kind, segments: [{ kind: "text", text }] });

export function moodWord(v: number, a: number): string {
  if (v >= 0.2) return a >= 0.2 ? "excited" : "content";
  if (v <= -0.2) return a >= 0.2 ? "tense" : "low";
  return a >= 0.3 ? "alert" : "calm";
}

const sign = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(2)}`;

function ToolLine({ a, dim }: { a: ToolActivity; dim: boolean }): ReactElement {
  const mark = a.state === "running" ? "…" : a.state === "ok" ? "✓" : "✗";
  const color = a.state === "running" ? "yellow" : a.state === "ok" ? "green" : "red";
  const args = a.call.arguments.length > 80 ? `${a.call.arguments.slice(0, 79)}…` : a.call.arguments;
  const took = a.ms === undefined ? "running" : `${a.state} ${Math.round(a.ms)} ms`;
  return h(Text, { dimColor: dim }, h(Text, { color }, `  ${mark} `), `${a.call.name} ${args} `, h(Text, { color }, took));
}

function EntryView({ e }: { e: Entry }): ReactElement {
  const dim = e.kind === "idle";
  const prefix =
    e.kind === "user"
      ? h(Text, { color: "cyan", bold: true }, "you › ")
      : e.kind === "reply"
        ? h(Text, { color: "magenta", bold: true }, "psyche › ")
        : dim
          ? h(Text, { dimColor: true }, "idle · ")
          : null;
  // The label goes on the first line: before the text, or alone above a tool line.
  const labelAlone = prefix && e.segments[0]?.kind !== "text";
  return h(
    Box,
    { flexDirection: "column", marginBottom: e.kind === "info" ? 0 : 1 },
    labelAlone ? h(Text, { key: "label" }, prefix) : null,
    ...e.segments.map((s, i) =>
      s.kind === "text"
        ? h(
            Text,
            { key: i, dimColor: dim || e.kind === "info", color: e.kind === "error" ? "red" : undefined, wrap: "wrap" },
            i === 0 ? prefix : null,
            s.text,
          )
        : h(ToolLine, { key: i, a: s.activity, dim }),
    ),
  );
}

function StatusBar({ s, session, busy, hint }: { s: Status; session: HermesSession; busy: string | null; hint: string }): ReactElement {
  const parts: (ReactElement | string)[] = [];
  if (s.reconnecting) parts.push(h(Text, { key: "r", color: "red", bold: true }, "reconnecting…"));
  if (s.valence !== null && s.arousal !== null)
    parts.push(`mood ${moodWord(s.valence, s.arousal)} (v ${sign(s.valence)} a ${sign(s.arousal)})`);
  if (s.dream) parts.push(`dream: ${s.dream}`);
  if (s.clients !== null) parts.push(`${s.clients} client${s.clients === 1 ? "" : "s"}`);
  parts.push(session.args.conversation);
  const line = parts.flatMap((p, i) => (i ? [" · ", p] : [p]));
  return h(
    Box,
    { flexDirection: "column" },
    h(Text, { inverse: true }, " ", ...line, " "),
    // One line, whatever the workspace's path: cut from its start, so "/help" stays in view (a
    // long path wrapped it onto a second line, split where the terminal ended).
    h(
      Text,
      { dimColor: true, wrap: "truncate-start" },
      hint || (busy ? `${busy} · Ctrl-C cancels` : `${session.workspace.root} · /help for commands`),
    ),
  );
}

function App({ session }: { session: HermesSession }): ReactElement {
  const { exit } = useApp();
  const [entries, setEntries] = useState<Entry[]>(() => [
    entry(
      "info",
      `Hermes · ${session.server.url} (${session.server.isPsyche ? "Psyche" : "an OpenAI-compatible server"}) · conversation ${session.args.conversation} · /help`,
    ),
  ]);
  const [live, setLive] = useState<Entry | null>(null);
  const [input, setInputState] = useState("");
  // The line as typed so far, read by the key handler: several inputs can arrive before React
  // renders again (a paste, a multiplexer, a slow link), and each must see the ones before it.
  const typed = useRef("");
  const setInput = useCallback((next: string) => {
    typed.current = next;
    setInputState(next);
  }, []);
  const [busy, setBusy] = useState<string | null>(null);
  const [asking, setAsking] = useState<Asking | null>(null);
  const [status, setStatus] = useState<Status>(session.status);
  const [hint, setHint] = useState("");
  const running = useRef<AbortController | null>(null);
  const armed = useRef(false);
  /** Why the run in progress was stopped, if it was: said once it ends. */
  const cancelled = useRef<string | null>(null);
  const lastKey = useRef(Date.now());

  const add = useCallback((e: Entry) => setEntries((all) => [...all, e]), []);

  useEffect(() => {
    session.onStatus = setStatus;
    void session.refreshStatus();
    const timer = setInterval(() => void session.refreshStatus(), 5000);
    session.setConfirm((name, args) => new Promise<boolean>((answer) => setAsking({ name, args, answer })));
    return () => clearInterval(timer);
  }, [session]);

  /** One run of the loop (the user's message, or an idle exploration), shown as it comes. */
  const runLoop = useCallback(
    async (kind: "reply" | "idle", start: (signal: AbortSignal, cb: Parameters<HermesSession["ask"]>[2]) => Promise<LoopResult>) => {
      const controller = new AbortController();
      running.current = controller;
      cancelled.current = null;
      setBusy(kind === "idle" ? "exploring the workspace" : "thinking");
      const turn: Entry = { id: nextId++, kind, segments: [] };
      const show = () => setLive({ ...turn, segments: [...turn.segments] });
      try {
        const result = await start(controller.signal, {
          onText: (text) => {
            const last = turn.segments.at(-1);
            if (last?.kind === "text") last.text += text;
            else turn.segments.push({ kind: "text", text });
            show();
          },
          onTool: (a) => {
            const at = turn.segments.findIndex((s) => s.kind === "tool" && s.activity.call.id === a.call.id);
            if (at >= 0) turn.segments[at] = { kind: "tool", activity: a };
            else turn.segments.push({ kind: "tool", activity: a });
            show();
          },
          onReconnecting: (on) => session.setStatus({ reconnecting: on }),
        });
        if (!turn.segments.length)
          turn.segments.push({
            kind: "text",
            text: result.reply.finishReason === "length" ? "(no reply: it reached the token limit first)" : "(no reply)",
          });
        add(turn);
        // The server ended the stream itself once told to stop: what it said is kept.
        if (cancelled.current) add(entry("info", cancelled.current));
      } catch (err) {
        if (turn.segments.length) add(turn);
        const stopped = cancelled.current ?? (controller.signal.aborted ? "cancelled" : null);
        add(entry(stopped ? "info" : "error", stopped ?? explain(err, session.server.url)));
      } finally {
        running.current = null;
        setLive(null);
        setBusy(null);
        lastKey.current = Date.now();
        void session.refreshStatus();
      }
    },
    [add, session],
  );

  // Idle exploration: once per spell of --idle-after seconds without a key.
  useEffect(() => {
    if (!session.args.idle || busy || asking) return;
    const timer = setTimeout(
      () => {
        const idleFor = (Date.now() - lastKey.current) / 1000;
        void runLoop("idle", (signal, cb) => session.explore(idleFor, signal, cb));
      },
      Math.max(0, lastKey.current + session.args.idleAfterSeconds * 1000 - Date.now()),
    );
    return () => clearTimeout(timer);
  }, [busy, asking, input, session, runLoop]);

  const stopRunning = (why: string) => {
    const controller = running.current;
    cancelled.current = why;
    void session.cancel().finally(() => controller?.abort());
  };

  const submit = async (line: string) => {
    if (!line.trim()) return;
    if (line.startsWith("/")) {
      add(entry("info", line));
      const result = await runSlash(session, line);
      if ("quit" in result) exit();
      else for (const l of result.lines) add(entry("info", l));
      return;
    }
    add(entry("user", line));
    await runLoop("reply", (signal, cb) => session.ask(line, signal, cb));
  };

  useInput((ch, key) => {
    lastKey.current = Date.now();
    if (key.ctrl && ch === "c") {
      if (asking) {
        asking.answer(false);
        setAsking(null);
      }
      // A second Ctrl-C quits even when something runs again by then: with a short --idle-after
      // an idle exploration can start between the two presses, and must not swallow the quit.
      if (armed.current) {
        if (running.current) stopRunning("cancelled");
        exit();
      } else if (running.current) {
        stopRunning("cancelled (Ctrl-C again to quit)");
        armed.current = true;
      } else {
        armed.current = true;
        setHint("Ctrl-C again to quit");
      }
      return;
    }
    armed.current = false;
    setHint("");
    if (asking) {
      if (ch === "y" || ch === "Y" || ch === "n" || ch === "N" || key.return || key.escape) {
        asking.answer(ch === "y" || ch === "Y");
        setAsking(null);
      }
      return;
    }
    // A key while Hermes explores on its own: the user is back, the exploration stops.
    if (busy === "exploring the workspace" && !cancelled.current) stopRunning("exploration stopped: you are back");
    const send = () => {
      // While a reply is being written the line waits (kept, not lost) until it is done.
      if (running.current && busy !== "exploring the workspace") {
        setHint("a reply is being written: Enter again once it is done, or Ctrl-C to cancel it");
        return;
      }
      const line = typed.current;
      setInput("");
      void submit(line);
    };
    if (key.return || ch === "\n" || ch === "\r") return send();
    if (key.backspace || key.delete) setInput(typed.current.slice(0, -1));
    else if (!key.ctrl && !key.meta && ch && !key.upArrow && !key.downArrow && !key.leftArrow && !key.rightArrow && !key.tab) {
      // Text that arrives with line breaks in it is pasted (docs/hermes.md): its lines stay
      // one message, and an Enter at its end sends it.
      const text = ch.replace(/\r\n?/g, "\n");
      setInput(typed.current + text.replace(/\n+$/, ""));
      if (text.endsWith("\n")) send();
    }
  });

  const ask = asking
    ? h(Text, { color: "yellow" }, `Run ${asking.name} ${JSON.stringify(asking.args).slice(0, 200)}? [y/N] `)
    : h(Box, null, h(Text, { color: "cyan" }, "› "), h(Text, null, input), h(Text, { inverse: true }, " "));
  return h(
    Box,
    { flexDirection: "column" },
    h(Static<Entry>, { items: entries, children: (e: Entry) => h(EntryView, { key: e.id, e }) }),
    live ? h(EntryView, { e: live }) : null,
    ask,
    h(StatusBar, { s: status, session, busy, hint }),
  );
}

/** Runs the UI until the user quits; says goodbye to the server on the way out. */
export async function runUi(session: HermesSession): Promise<number> {
  try {
    await session.open();
  } catch (err) {
    process.stderr.write(`hermes: ${explain(err, session.server.url)}\n`);
    return 1;
  }
  // A closed terminal (SIGHUP) or a kill (SIGTERM) still says goodbye: the client leaves at
  // once rather than after its missed heartbeats, and Psyche may dream.
  // The next render then fails to write (EIO), which is the terminal being gone too, not a crash.
  let leaving = false;
  const goodbye = (code: number) => {
    if (leaving) return;
    leaving = true;
    void session.close().finally(() => process.exit(code));
  };
  const onHangup = () => goodbye(129);
  const onTerm = () => goodbye(143);
  const onWriteError = () => goodbye(129);
  // `on`, not `once`: Ink's exit hook (signal-exit) kills the process at once when it finds
  // itself the only listener left, and a `once` listener is gone by the time it looks, so the
  // goodbye would never be sent. `goodbye` runs once however many signals come.
  process.on("SIGHUP", onHangup);
  process.on("SIGTERM", onTerm);
  process.stdout.on("error", onWriteError);
  // Ink turns raw mode on in an effect after its first frame: a Ctrl-C pressed as the prompt
  // appears was the terminal's SIGINT then, and Hermes died without its goodbye instead of
  // warning. In raw mode from here on, it waits as a key for the input hook.
  if (process.stdin.isTTY) process.stdin.setRawMode(true);
  const app = render(h(App, { session }), { exitOnCtrlC: false });
  try {
    // Rejects when the terminal's input fails (it closed): the goodbye is said all the same.
    await app.waitUntilExit();
  } catch {
    goodbye(129);
    return 129;
  }
  process.off("SIGHUP", onHangup);
  process.off("SIGTERM", onTerm);
  process.stdout.off("error", onWriteError);
  await session.close();
  return 0;
}

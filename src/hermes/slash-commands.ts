// The UI's slash commands: each answers with lines to show (or quits). Psyche's own routes
// back them; against another server they say so.
import type { HermesSession } from "./session.js";
import { explain } from "./server.js";

export const SLASH_HELP = [
  "/help               this list",
  "/memories <query>   what Psyche remembers about it (top 5)",
  "/dream              queue a dream now (it runs when no reply is being written)",
  "/journal            the last five entries of the dream journal",
  "/quit               leave (Ctrl-C twice does too)",
  "Ctrl-C              cancel the reply in progress; again to quit",
];

export type SlashResult = { lines: string[] } | { quit: true };

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s).replace(/\s+/g, " ");

export async function runSlash(session: HermesSession, line: string): Promise<SlashResult> {
  const [command, ...rest] = line.trim().split(/\s+/);
  const arg = rest.join(" ");
  if (command === "/quit" || command === "/exit") return { quit: true };
  if (command === "/help") return { lines: SLASH_HELP };
  if (!["/memories", "/dream", "/journal"].includes(command!)) return { lines: [`unknown command ${command}; /help lists them`] };
  if (!session.server.isPsyche)
    return { lines: [`${command} needs Psyche's own API; ${session.server.url} is another OpenAI-compatible server`] };
  try {
    if (command === "/memories") {
      if (!arg) return { lines: ["/memories needs a query, e.g. /memories the garden"] };
      const res = (await session.server.get(`/v1/memories/search?q=${encodeURIComponent(arg)}&k=5`)) as {
        data: { kind: string; content: string; score: number }[];
      };
      if (!res.data.length) return { lines: [`nothing remembered about "${arg}"`] };
      return { lines: res.data.map((m) => `• [${m.kind}] ${clip(m.content, 160)} (${m.score.toFixed(2)})`) };
    }
    if (command === "/dream") {
      const res = (await session.server.request("POST", "/dream/jobs", { kind: "dream" })) as { data: { id: string }[] };
      return { lines: [`queued a dream (job ${res.data[0]?.id}); /journal shows it once it ends`] };
    }
    const res = (await session.server.get("/dream/journal?limit=5")) as {
      data: { started_at: string; kind: string; status: string; tokens: number; content: string }[];
    };
    if (!res.data.length) return { lines: ["the dream journal is empty"] };
    return {
      lines: res.data.map(
        (d) =>
          `${d.started_at.slice(0, 19).replace("T", " ")} ${d.kind} ${d.status}, ${d.tokens} tokens: ${clip(d.content || "(nothing)", 120)}`,
      ),
    };
  } catch (err) {
    return { lines: [`${command} failed: ${explain(err, session.server.url)}`] };
  }
}

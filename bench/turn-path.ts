// What a chat turn spends before its first token reaches the client (issue "Short steps at the
// engine's speed"), stage by stage, on the tiny model: `psyche serve` as a user starts it (bare:
// no persona, no recalled memories), requests read as a client reads them, and the turn's own
// rows for the times in between (the embedded database runs in the server's process, on the
// same clock). Each stage's start is a statement's `now()`, its transaction's start:
//   sent -> stored      HTTP, parsing, the conversation opened, until the storing statement starts
//   stored -> claimed   that statement, the signal to the worker, until the take-and-claim starts;
//                       none where the turn was handed to the worker beside the web role, stored
//                       claimed (src/jobs/hand-off.ts): its claim is its storing statement's
//   claimed -> written  the claim, the prompt built and tokenized, the slot chosen, the prompt
//                       read, the first token, until the first event's insert starts
//   written -> client   that insert, its signal, the relay and the SSE write
import { join } from "node:path";
import { rmSync } from "node:fs";
import pg from "pg";
import { packageRoot } from "../src/paths.js";
import { startServer } from "./llama-server.js";
import { streamChat } from "./serving.js";

export const STAGES = ["sent -> stored", "stored -> claimed", "claimed -> written", "written -> client", "first token"] as const;
type Stage = (typeof STAGES)[number];

export interface TurnPathResult {
  date: string;
  /** Sequential single chats measured, and rounds of `atOnce` chats at once. */
  runs: number;
  rounds: number;
  atOnce: number;
  /** Medians per stage in microseconds: one chat alone, and chats at once (every chat of every round). */
  alone: Record<Stage, number>;
  together: Record<Stage, number>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};

export async function benchTurnPath(o: {
  model: string;
  dataDir: string;
  threads: number;
  runs: number;
  rounds: number;
  atOnce: number;
  say: (line: string) => void;
}): Promise<TurnPathResult> {
  const dir = join(o.dataDir, "turn-path");
  rmSync(dir, { recursive: true, force: true });
  const { DATABASE_URL: _ignored, ...env } = process.env;
  const args = [join(packageRoot(), "bin", "psyche.cjs"), "serve", "--model", o.model, "--gpu", "false", "--threads", String(o.threads)];
  args.push("--parallel", String(Math.max(4, o.atOnce)), "--context-size", "4096", "--port", "0", "--db-port", "0", "--data-dir", dir);
  args.push("--embedding-model", "builtin", "--dream-delay-seconds", "0", "--consolidation", "false", "--log-level", "warn");
  args.push("--persona", "", "--recall-prompt-tokens", "0");
  // The listening line, then the embedded database's address (src/processes/serve.ts).
  const server = await startServer(
    process.execPath,
    args,
    /listening on (http:\/\/\S+)[\s\S]*?psql "([^"]+)"/,
    (m) => `${m[1]} ${m[2]}`,
    env,
  );
  const [url, databaseUrl] = server.url.split(" ") as [string, string];
  const db = new pg.Client({ connectionString: databaseUrl });
  try {
    await db.connect();
    const nonce = Date.now().toString(36);
    const sent = new Map<string, { sentAt: number; firstAt: number }>();
    const chat = async (name: string, maxTokens: number) => {
      const content = `Turn path ${name} ${nonce}: tell me a story.`;
      const r = await streamChat(url, [{ role: "user", content }], maxTokens, sent.size + 1);
      sent.set(content, { sentAt: performance.timeOrigin + r.startedAt, firstAt: performance.timeOrigin + r.firstAt });
      return content;
    };
    o.say(`turn path: warming up, then ${o.runs} chats alone and ${o.rounds} rounds of ${o.atOnce} at once`);
    for (let i = 0; i < 16; i++) await chat(`warm-up ${i}`, 64);
    for (let round = 0; round < 2; round++)
      await Promise.all(Array.from({ length: o.atOnce }, (_, i) => chat(`warm-up ${round}.${i}`, 16)));
    const alone: string[] = [];
    for (let i = 0; i < o.runs; i++) alone.push(await chat(`alone ${i}`, 8));
    const together: string[] = [];
    for (let round = 0; round < o.rounds; round++)
      together.push(...(await Promise.all(Array.from({ length: o.atOnce }, (_, i) => chat(`at once ${round}.${i}`, 8)))));
    const rows = (
      await db.query<{ content: string; stored: number; claimed: number; written: number }>(
        `select m.content,
                (extract(epoch from t.created_at) * 1000)::float8 as stored,
                (extract(epoch from t.started_at) * 1000)::float8 as claimed,
                (extract(epoch from (select min(e.created_at) from turn_events e where e.turn_id = t.id)) * 1000)::float8 as written
           from messages m join turns t on t.id = m.turn_id
          where m.role = 'user' and m.content like $1`,
        [`Turn path % ${nonce}: %`],
      )
    ).rows;
    const byContent = new Map(rows.map((r) => [r.content, r]));
    const stages = (contents: string[]) => {
      const out = Object.fromEntries(STAGES.map((s) => [s, [] as number[]])) as Record<Stage, number[]>;
      for (const content of contents) {
        const r = byContent.get(content);
        const c = sent.get(content)!;
        if (!r) throw new Error(`no turn stored for "${content}"`);
        out["sent -> stored"].push(r.stored - c.sentAt);
        out["stored -> claimed"].push(r.claimed - r.stored);
        out["claimed -> written"].push(r.written - r.claimed);
        out["written -> client"].push(c.firstAt - r.written);
        out["first token"].push(c.firstAt - c.sentAt);
      }
      return Object.fromEntries(STAGES.map((s) => [s, Math.round(median(out[s]) * 1000)])) as Record<Stage, number>;
    };
    return {
      date: new Date().toISOString(),
      runs: o.runs,
      rounds: o.rounds,
      atOnce: o.atOnce,
      alone: stages(alone),
      together: stages(together),
    };
  } finally {
    await db.end().catch(() => undefined);
    await server.stop();
  }
}

// The llama-server table's rows of chats at once (bench/vs-llama-server.ts): checked on the median
// of the rounds' ratios where the rounds were paired, the ratio of the medians shown beside it;
// older results without rounds' ratios checked on the medians' ratio, as before.
import t from "tap";
import { vsLlamaServerTable, type VsLlamaServerResult } from "../../bench/vs-llama-server.js";

const session = {
  promptTokens: 100,
  coldTtftMs: 1000,
  warmTtftMs: 50,
  warmShareOfCold: 0.05,
  afterTakenTtftMs: 60,
  afterTakenShareOfCold: 0.06,
};
const burst = (aggregateTps: number, ttftLastMs: number) => ({ k: 4, aggregateTps, ttftMedianMs: ttftLastMs, ttftLastMs, wallMs: 1000 });
const result = (paired: boolean): VsLlamaServerResult => ({
  date: "2026-12-07T00:00:00.000Z",
  commit: "de3ff81",
  builtSeconds: null,
  threads: 2,
  parallel: 16,
  oneStream: { llama: { ttftMs: 8, decodeTps: 1000 }, psyche: { ttftMs: 12, decodeTps: 1000 } },
  // The medians of rounds run minutes apart: llama-server's fast rounds and Psyche's slow ones.
  concurrent: [
    {
      llama: burst(1000, 15),
      psyche: burst(700, 40),
      ...(paired
        ? {
            paired: {
              aggregateRatio: { q1: 0.8, median: 0.85, q3: 0.9 },
              lastRatio: { q1: 1.6, median: 1.8, q3: 2.1 },
            },
          }
        : {}),
    },
  ],
  concurrentRounds: 9,
  session: { llama: session, psyche: session },
  targets: { oneStream: 0.9, atOnce: 0.8, lastFirstToken: 2, atOnceCounts: [4] },
});

const row = (lines: string[], start: string) => lines.find((l) => l.startsWith(`| ${start}`)) ?? "";

t.test("rounds' ratios: the check is theirs, the medians' ratio beside it", async (t) => {
  const lines = vsLlamaServerTable(result(true));
  const aggregate = row(lines, "4 at once: aggregate");
  t.match(aggregate, /\| 85% \(rounds' IQR 80% to 90%; medians' 70%\) \| >= 80% \| yes \|$/);
  const last = row(lines, "4 at once: first token");
  t.match(last, /\| 1\.80x \(last; rounds' IQR 1\.60x to 2\.10x; medians' 2\.67x\) \| <= 2x \| yes \|$/);
  t.match(lines.join("\n"), /the median of the rounds' ratios/);
});

t.test("older results, no rounds' ratios: the medians' ratios, checked as before", async (t) => {
  const lines = vsLlamaServerTable(result(false));
  t.match(row(lines, "4 at once: aggregate"), /\| 70% \| >= 80% \| \*\*no\*\* \|$/);
  t.match(row(lines, "4 at once: first token"), /\| 2\.67x \(last\) \| <= 2x \| \*\*no\*\* \|$/);
});

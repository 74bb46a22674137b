// npm run soak: the soak with faults (bench/soak/soak.ts), its figures printed and written to
// bench/results/soak-<database>.json; exit 1 when an invariant fails. SOAK_SECONDS (600), SOAK_CLIENTS (4),
// SOAK_KILL_EVERY_SECONDS (12); DATABASE_URL for a real Postgres instead of the embedded one.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/paths.js";
import { allHold } from "./invariants.js";
import { soak } from "./soak.js";

const num = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};

const result = await soak({
  seconds: num("SOAK_SECONDS", 600),
  clients: num("SOAK_CLIENTS", 4),
  killEveryMs: num("SOAK_KILL_EVERY_SECONDS", 12) * 1000,
  databaseUrl: process.env.DATABASE_URL || undefined,
  say: (line) => console.log(line),
});
const i = result.invariants;
const ok = allHold(i);
console.log(
  [
    `soak on ${result.database}: ${result.seconds} s, ${result.clients} clients`,
    `  kills survived: ${result.kills.inference + result.kills.web} (inference ${result.kills.inference}, web ${result.kills.web})`,
    `  turns: ${i.turns} stored; replies read: ${result.replies} (${result.streamed} streamed, ${result.resumed} resumed after a web kill); abandoned: ${result.abandoned}`,
    `  memories stored: ${result.memoriesStored}, searches: ${result.searches}, requests refused while a process was down: ${result.refused}`,
    `  bad requests rejected: ${result.rejected} (accepted by mistake: ${result.wronglyAccepted}; written: ${i.rejectedWritten})`,
    `  lost: ${i.lost.length}, duplicated: ${i.duplicated.length}, replies unlike the stored one: ${i.mismatched.length}, memory jobs wrong: ${i.memoryJobsWrong.length}, left running: ${i.leftRunning.jobs} jobs, ${i.leftRunning.dreams} dreams`,
    ok && result.wronglyAccepted === 0
      ? "  every invariant holds"
      : `  INVARIANTS FAILED: ${JSON.stringify({ lost: i.lost, duplicated: i.duplicated, mismatched: i.mismatched, memoryJobsWrong: i.memoryJobsWrong }).slice(0, 2000)}`,
  ].join("\n"),
);
const dir = join(packageRoot(), "bench", "results");
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, `soak-${result.database}.json`), JSON.stringify({ at: new Date().toISOString(), ...result }, null, 2) + "\n");
process.exit(ok && result.wronglyAccepted === 0 ? 0 : 1);

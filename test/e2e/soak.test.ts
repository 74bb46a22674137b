// A short soak with faults (bench/soak/soak.ts; `npm run soak` runs the long one): web and
// inference as separate processes, killed with SIGKILL and started again while clients stream,
// continue conversations and use memory. Nothing may be lost, doubled or left running.
import t from "tap";
import { existsSync } from "node:fs";
import { soak } from "../../bench/soak/soak.js";
import { CLI } from "../../bench/soak/processes.js";
import { testDatabaseUrl } from "../helpers/postgres.js";
import { serverDir } from "../helpers/testdir.js";

if (!existsSync(CLI)) {
  t.fail(`${CLI} is missing: run npm run build (npm test does)`);
  process.exit(1);
}

t.test("kills of web and inference lose nothing, double nothing, and leave nothing running", async (t) => {
  const result = await soak({ seconds: 24, clients: 3, killEveryMs: 5000, databaseUrl: await testDatabaseUrl(serverDir(t)) });
  const i = result.invariants;
  t.ok(result.kills.inference + result.kills.web >= 2, `kills: ${JSON.stringify(result.kills)}`);
  const replied = t.ok(result.replies > 0 && i.turns >= result.replies, `${result.replies} replies read, ${i.turns} turns stored`, {
    failures: result.failures,
  });
  // Why nothing came back is in the processes' own words.
  if (!replied) t.comment(`web:\n${result.logs.web}\ninference:\n${result.logs.inference}`);
  t.ok(result.rejected > 0, "bad requests were sent and refused");
  t.equal(result.wronglyAccepted, 0, "every bad request that reached a web process was refused");
  t.same(i.lost, [], "no turn lost");
  t.same(i.duplicated, [], "no turn finished twice");
  t.same(i.mismatched, [], "every reply read equals the stored one, resumed streams included");
  t.same(i.memoryJobsWrong, [], "one memory job per finished turn");
  t.same(i.leftRunning, { jobs: 0, dreams: 0 }, "nothing left running");
  t.equal(i.rejectedWritten, 0, "nothing written for a refused request");
});

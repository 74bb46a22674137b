// The dream scheduler's tick: while this process generates a chat, or had one within the wake
// lock, it asks the database nothing (nothing is due then); after, what is due is queued. Real
// embedded Postgres and pg-boss.
import t, { type Test } from "tap";
import { DreamScheduler } from "../../src/dreams/scheduler.js";
import { defaultDreamSettings } from "../../src/dreams/settings.js";
import { startEmbeddedDatabase } from "../../src/db/embedded.js";
import { migrate } from "../../src/db/migrate.js";
import { createPool } from "../../src/db/pool.js";
import { LocalBus } from "../../src/jobs/bus.js";
import { startQueue } from "../../src/jobs/queue.js";
import { createLogger } from "../../src/log.js";
import { seededDir } from "../helpers/db-template.js";
import { testConfig } from "../helpers/psyche.js";
import { until } from "../helpers/until.js";

const dir = await seededDir(t);
const db = await startEmbeddedDatabase({ dataDir: dir, port: 0 });
t.teardown(() => db.stop());
const pool = createPool(db.connectionString, 2);
t.teardown(() => pool.end());
await migrate(pool);
const log = createLogger("silent");
const boss = await startQueue({ connectionString: db.connectionString, log });
t.teardown(() => boss.stop({ graceful: false, wait: true }));

/**
 * A scheduler with a dream delay of 1 s and `wakeLockSeconds`, told `sinceChat()` of this
 * process's chats: after `waitMs`, one tick finds nothing without asking the database; once
 * `after()` has moved the chat away, a tick queues a dream.
 */
async function holdsBackThenDreams(
  t: Test,
  o: { wakeLockSeconds: number; sinceChat: () => number; waitMs: number; held: string; after: () => void },
): Promise<void> {
  const defaults = {
    ...defaultDreamSettings(testConfig(dir, { dreamDelaySeconds: 1 })),
    wake_lock_seconds: o.wakeLockSeconds,
    dream_cooldown_seconds: 0,
  };
  const scheduler = new DreamScheduler({
    pool,
    boss,
    bus: new LocalBus(),
    log,
    defaults,
    everyMs: 60_000,
    presenceTtlSeconds: 60,
    sinceChatMs: o.sinceChat,
  });
  let asked = 0;
  const count = () => asked++;
  pool.on("acquire", count);
  t.teardown(() => void pool.off("acquire", count));
  // Past the dream delay and the wake lock (counted from the scheduler's start): only the chat holds a dream back.
  await new Promise((r) => setTimeout(r, o.waitMs));
  t.equal(await scheduler.tick(), undefined, o.held);
  t.equal(asked, 0, "and the database was not asked");
  o.after();
  const id = await until("a dream queued", () => scheduler.tick());
  t.ok(asked > 0, "then the tick looked");
  const job = await pool.query("select data->>'kind' as kind from pgboss.job where id = $1", [id]);
  t.equal(job.rows[0]?.kind, "dream");
  // Queued, it keeps the queue busy: nothing would be due for the next test.
  await pool.query("delete from pgboss.job where id = $1", [id]);
}

const cases = [
  { name: "no look while a chat is generated here; a dream is queued once none is", wakeLockSeconds: 0, since: [0, 1], waitMs: 1_100 },
  {
    name: "no look within the wake lock of this process's last chat; one after it",
    wakeLockSeconds: 2,
    since: [1_500, 2_500],
    waitMs: 2_100,
  },
];
for (const c of cases) {
  t.test(c.name, async (t) => {
    let sinceChatMs = c.since[0]!;
    await holdsBackThenDreams(t, {
      wakeLockSeconds: c.wakeLockSeconds,
      sinceChat: () => sinceChatMs,
      waitMs: c.waitMs,
      held: `nothing queued ${sinceChatMs} ms after a chat (0: under way), within a wake lock of ${c.wakeLockSeconds} s`,
      after: () => (sinceChatMs = c.since[1]!),
    });
  });
}

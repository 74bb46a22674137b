// The dream scheduler's tick: while this process generates a chat, or had one within the wake
// lock, it asks the database nothing (nothing is due then); after, what is due is queued. Real
// embedded Postgres and pg-boss.
import t from "tap";
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

t.test("no look while a chat is generated here; a dream is queued once none is", async (t) => {
  let sinceChatMs = 0;
  const defaults = { ...defaultDreamSettings(testConfig(dir, { dreamDelaySeconds: 1 })), wake_lock_seconds: 0, dream_cooldown_seconds: 0 };
  const scheduler = new DreamScheduler({
    pool,
    boss,
    bus: new LocalBus(),
    log,
    defaults,
    everyMs: 60_000,
    presenceTtlSeconds: 60,
    sinceChatMs: () => sinceChatMs,
  });
  let asked = 0;
  const count = () => asked++;
  pool.on("acquire", count);
  t.teardown(() => void pool.off("acquire", count));
  // Past the dream delay (counted from the scheduler's start): a dream would be due.
  await new Promise((r) => setTimeout(r, 1_100));
  t.equal(await scheduler.tick(), undefined, "nothing queued while generating");
  t.equal(asked, 0, "and the database was not asked");
  sinceChatMs = 1;
  const id = await until("a dream queued", () => scheduler.tick());
  t.ok(asked > 0, "the tick looked");
  const job = await pool.query("select data->>'kind' as kind from pgboss.job where id = $1", [id]);
  t.equal(job.rows[0]?.kind, "dream");
});

t.test("no look within the wake lock of this process's last chat; one after it", async (t) => {
  // The dream the last test queued would keep the queue busy, and nothing would be due.
  await pool.query("delete from pgboss.job where state = 'created'");
  let sinceChatMs = 1_500;
  const defaults = { ...defaultDreamSettings(testConfig(dir, { dreamDelaySeconds: 1 })), wake_lock_seconds: 2, dream_cooldown_seconds: 0 };
  const scheduler = new DreamScheduler({
    pool,
    boss,
    bus: new LocalBus(),
    log,
    defaults,
    everyMs: 60_000,
    presenceTtlSeconds: 60,
    sinceChatMs: () => sinceChatMs,
  });
  let asked = 0;
  const count = () => asked++;
  pool.on("acquire", count);
  t.teardown(() => void pool.off("acquire", count));
  // Past the wake lock and the dream delay from the scheduler's start: only the chat holds it back.
  await new Promise((r) => setTimeout(r, 2_100));
  t.equal(await scheduler.tick(), undefined, "nothing queued 1.5 s after a chat, within a wake lock of 2");
  t.equal(asked, 0, "and the database was not asked");
  sinceChatMs = 2_500;
  const id = await until("a dream queued", () => scheduler.tick());
  t.ok(asked > 0, "past the wake lock the tick looked");
  const job = await pool.query("select data->>'kind' as kind from pgboss.job where id = $1", [id]);
  t.equal(job.rows[0]?.kind, "dream");
});

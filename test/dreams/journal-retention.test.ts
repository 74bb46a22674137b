// Journal retention (--journal-keep-days): entries that ended long ago and did not become a
// memory go; what became a memory, what is recent, what is still dreaming and the latest entry
// of each kind stay. The real embedded database.
import t from "tap";
import { randomUUID } from "node:crypto";
import { pruneJournal } from "../../src/db/sql/dreams.js";
import { testDatabase } from "../helpers/database.js";

const db = await testDatabase(t);
const pool = db.pool;

async function entry(kind: string, daysAgo: number, status = "done"): Promise<string> {
  const id = randomUUID();
  await pool.query(
    `insert into dream_journal (id, kind, status, started_at, ended_at, content, model)
     values ($1, $2, $3, now() - make_interval(days => $4::int) - interval '1 minute',
             case when $3 = 'dreaming' then null else now() - make_interval(days => $4::int) end, 'a thought', 'test')`,
    [id, kind, status, daysAgo],
  );
  return id;
}

t.test("old entries that became nothing go; the rest stay", async (t) => {
  const oldNothing = await entry("idle", 40);
  const oldMemory = await entry("dream", 40);
  await pool.query(
    `insert into memories (id, kind, content, source_kind, source_id, importance, embedding, embedder)
     values ($1, 'dream', 'a kept dream', 'dream', $2, 0.5, '[1,0,0]', 'test')`,
    [randomUUID(), oldMemory],
  );
  const oldDreaming = await entry("reflect", 40, "dreaming");
  const recent = await entry("idle", 5);
  const latestDream = await entry("dream", 35);
  const latestConsolidation = await entry("consolidate", 50, "interrupted");

  t.equal(await pruneJournal(pool, 30), 1, "one entry deleted");
  const left = new Set((await pool.query<{ id: string }>("select id::text from dream_journal")).rows.map((r) => r.id));
  t.notOk(left.has(oldNothing), "an old idle thought that became no memory");
  t.ok(left.has(oldMemory), "kept: it became a memory");
  t.ok(left.has(oldDreaming), "kept: still dreaming");
  t.ok(left.has(recent), "kept: recent");
  t.ok(left.has(latestDream) && left.has(latestConsolidation), "kept: the latest of each kind, however old");
  t.equal(await pruneJournal(pool, 30), 0, "and again: nothing more");
});

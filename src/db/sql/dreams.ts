import { DEFAULT_SCOPE } from "../../scope.js";
import type { Queryable } from "../pool.js";

export const JOURNAL_KINDS = ["dream", "reflect", "idle", "consolidate"] as const;
export type JournalKind = (typeof JOURNAL_KINDS)[number];
/** 'paused': woken (or out of its share of time) and to be continued by a later reverie (migrations/000030_dream_resume.sql). */
export const JOURNAL_STATUSES = ["dreaming", "paused", "done", "interrupted", "failed"] as const;
export type JournalStatus = (typeof JOURNAL_STATUSES)[number];

export interface DreamRow {
  id: string;
  kind: JournalKind;
  status: JournalStatus;
  job_id: string | null;
  focus: string | null;
  started_at: Date;
  ended_at: Date | null;
  seed_memory_ids: string[];
  content: string;
  significance: number | null;
  valence: number | null;
  arousal: number | null;
  was_interrupted: boolean;
  wake_latency_ms: number | null;
  tokens: number;
  model: string;
  error: string | null;
  /** The scope it drew on (migrations/000023_dream_scope.sql). */
  scope: string;
  /** What it is about (migrations/000029_dream_topics.sql). */
  topics: string[];
  /** How often it was continued after a pause, when its latest stretch began, and why it ended as it did where that is not plain (migrations/000030_dream_resume.sql). */
  resumes: number;
  resumed_at: Date | null;
  note: string | null;
}

export async function startDream(
  db: Queryable,
  d: {
    id: string;
    kind?: JournalKind;
    jobId: string | null;
    focus: string | null;
    seedMemoryIds: string[];
    model: string;
    workerId?: string | undefined;
    /** The scope it draws on; default: default. */
    scope?: string | undefined;
    /** What it is about, from what it starts from (memory/topics.ts). */
    topics?: readonly string[] | undefined;
  },
): Promise<void> {
  // A reverie's stretch of the model's time starts with it (a consolidation takes none).
  await db.query(
    `with entry as (
       insert into dream_journal (id, kind, job_id, focus, seed_memory_ids, model, worker_id, scope, topics)
       values ($1, $2, $3, $4, $5::uuid[], $6, $7, coalesce($8, 'default'), $9::text[]) returning id, kind, job_id
     )
     insert into dream_slices (journal_id, job_id) select id, job_id from entry where kind <> 'consolidate'`,
    [d.id, d.kind ?? "dream", d.jobId, d.focus, d.seedMemoryIds, d.model, d.workerId ?? null, d.scope ?? null, [...(d.topics ?? [])]],
  );
}

/** What an entry turned out to be about (memory/topics.ts). */
export async function setDreamTopics(db: Queryable, id: string, topics: readonly string[]): Promise<void> {
  await db.query("update dream_journal set topics = $2::text[] where id = $1", [id, [...topics]]);
}

export async function endDream(
  db: Queryable,
  id: string,
  r: {
    status: "done" | "paused" | "interrupted" | "failed";
    content: string;
    tokens: number;
    significance: number | null;
    valence: number | null;
    arousal: number | null;
    error?: string | null;
    note?: string | null;
  },
  /** For a woken reverie: milliseconds since its generation stopped (the wake latency runs to then). */
  stoppedMsAgo: number | null = null,
): Promise<void> {
  // The wake latency runs from what woke it, as the database recorded it: the earliest chat
  // request (a turn's created_at), wake request or client arrival since the reverie's latest
  // stretch began, to the moment generation stopped, on the database's clock so that no two
  // clocks are compared. Once woken, an entry stays was_interrupted, resumed or not.
  await db.query(
    `with ended as (
       update dream_journal d set status = $2, content = $3, tokens = $4, significance = $5, valence = $6, arousal = $7,
         was_interrupted = d.was_interrupted or $2 in ('interrupted', 'paused'), error = $8, note = coalesce($10, d.note), ended_at = now(),
         wake_latency_ms = case when $9::float8 is null then d.wake_latency_ms else (
           select greatest(0, extract(epoch from (now() - make_interval(secs => $9::float8 / 1000)) - cause.at) * 1000)
           from (select least(
             (select min(created_at) from turns where created_at >= coalesce(d.resumed_at, d.started_at)),
             (select max(wake_requested_at) from dream_settings where wake_requested_at >= coalesce(d.resumed_at, d.started_at)),
             (select min(connected_at) from clients where connected_at >= coalesce(d.resumed_at, d.started_at))) as at) cause
           where cause.at is not null) end
       where id = $1 returning id
     )
     update dream_slices s set ended_at = now() from ended where s.journal_id = ended.id and s.ended_at is null`,
    [id, r.status, r.content, r.tokens, r.significance, r.valence, r.arousal, r.error ?? null, stoppedMsAgo, r.note ?? null],
  );
}

/** A paused entry taken up again: its row, and the seconds of the model's time it has already had. */
export interface ResumedDream extends DreamRow {
  dreamt_seconds: number;
}

/**
 * Takes up the oldest paused entry of `kind` (of `scope`, when given) for job `jobId`: it is
 * dreaming again, in a new stretch. Undefined when none is paused. Two workers never take the
 * same one (skip locked).
 */
export async function resumeDream(
  db: Queryable,
  w: { kind: JournalKind; scope: string | null; jobId: string | null; workerId?: string | undefined },
): Promise<ResumedDream | undefined> {
  const res = await db.query<ResumedDream>(
    `with taken as (
       update dream_journal set status = 'dreaming', resumes = resumes + 1, resumed_at = now(), ended_at = null, job_id = $3, worker_id = $4
       where id = (select id from dream_journal where status = 'paused' and kind = $1 and ($2::text is null or scope = $2)
                   order by started_at limit 1 for update skip locked)
       returning *
     ), slice as (insert into dream_slices (journal_id, job_id) select id, job_id from taken)
     select taken.*, (select coalesce(sum(extract(epoch from s.ended_at - s.started_at)), 0)::float8 from dream_slices s
                      where s.journal_id = taken.id and s.ended_at is not null) as dreamt_seconds
     from taken`,
    [w.kind, w.scope, w.jobId, w.workerId ?? null],
  );
  return res.rows[0];
}

/** The memories `ids` that still exist, in that order (a resumed reverie's seeds). */
export async function liveSeeds(db: Queryable, ids: readonly string[]): Promise<{ id: string; content: string }[]> {
  const res = await db.query<{ id: string; content: string }>(
    `select m.id, m.content from unnest($1::uuid[]) with ordinality as i(id, n) join memories m on m.id = i.id
     where m.deleted_at is null order by i.n`,
    [ids],
  );
  return res.rows;
}

/**
 * A running reverie's text so far: a worker killed mid-dream leaves what it had dreamt, not an
 * empty entry (the entry is closed as failed, content kept, by the next worker).
 */
export async function checkpointDream(db: Queryable, id: string, content: string, tokens: number): Promise<void> {
  await db.query("update dream_journal set content = $2, tokens = $3 where id = $1 and status = 'dreaming'", [id, content, tokens]);
}

/** What a journal entry drew on, once known (consolidation: the memories it kept). */
export async function setDreamSeeds(db: Queryable, id: string, memoryIds: readonly string[]): Promise<void> {
  await db.query("update dream_journal set seed_memory_ids = $2::uuid[] where id = $1", [id, memoryIds]);
}

export async function scoreDream(
  db: Queryable,
  id: string,
  s: { importance: number; valence: number | null; arousal: number | null },
): Promise<void> {
  await db.query(`update dream_journal set significance = $2, valence = $3, arousal = $4 where id = $1`, [
    id,
    s.importance,
    s.valence,
    s.arousal,
  ]);
}

export interface JournalFilter {
  limit: number;
  kind?: JournalKind | undefined;
  status?: DreamRow["status"] | undefined;
  /** Entries that began before this (paging back). */
  before?: Date | undefined;
  jobId?: string | undefined;
  /** Only entries of these scopes; undefined or null: all. */
  scopes?: readonly string[] | null | undefined;
}

/** Newest first. */
export async function recentDreams(db: Queryable, f: JournalFilter): Promise<DreamRow[]> {
  const res = await db.query<DreamRow>(
    `select * from dream_journal
     where ($2::text is null or kind = $2) and ($3::text is null or status = $3)
       and ($4::timestamptz is null or started_at < $4) and ($5::uuid is null or job_id = $5)
       and ($6::text[] is null or scope = any($6))
     order by started_at desc, id limit $1`,
    [f.limit, f.kind ?? null, f.status ?? null, f.before ?? null, f.jobId ?? null, f.scopes ?? null],
  );
  return res.rows;
}

/** Chat turns waiting for the worker (their place in line under do-not-disturb). */
export async function chatsWaiting(db: Queryable): Promise<number> {
  const res = await db.query<{ n: number }>(`select count(*)::int as n from turns where status = 'queued'`);
  return res.rows[0]?.n ?? 0;
}

/** Dream seeds: the most recent, the most important, and a few at random. */
export async function dreamSeeds(db: Queryable, each: number, scope: string = DEFAULT_SCOPE): Promise<{ id: string; content: string }[]> {
  const res = await db.query<{ id: string; content: string }>(
    `(select id, content from memories where deleted_at is null and scope = $2 and kind <> 'dream' order by created_at desc limit $1)
     union
     (select id, content from memories where deleted_at is null and scope = $2 and kind <> 'dream' order by importance desc limit $1)
     union
     (select id, content from memories where deleted_at is null and scope = $2 order by random() limit $1)`,
    [each, scope],
  );
  return res.rows;
}

/** Memories from a conversation's latest turns (what an idle thought turns over). */
export async function conversationSeeds(db: Queryable, conversationId: string, turns: number): Promise<{ id: string; content: string }[]> {
  const res = await db.query<{ id: string; content: string }>(
    `select m.id, m.content from memories m
     where m.deleted_at is null and m.source_kind = 'turn'
       and m.source_id in (select id::text from turns where conversation_id = $1 order by created_at desc limit $2)
     order by m.created_at`,
    [conversationId, turns],
  );
  return res.rows;
}

/** The last finished reflection of any scope began here ('-infinity': never). */
/** When a turn last began or ended: two indexes' ends (migrations/000032_growing_tables.sql), not a read of every turn. */
const LAST_TURN_ACTIVITY = "greatest((select max(created_at) from turns), (select max(finished_at) from turns))";

const LAST_REFLECTION = `coalesce((select max(started_at) from dream_journal where kind = 'reflect' and status = 'done'), '-infinity')`;

/** What a reflection in scope $2 draws on: the most important memories since that scope's last one (not dreams). */
export async function reflectionSources(
  db: Queryable,
  limit: number,
  scope: string = DEFAULT_SCOPE,
): Promise<{ id: string; content: string }[]> {
  const res = await db.query<{ id: string; content: string }>(
    `select id, content from memories
     where deleted_at is null and scope = $2 and kind <> 'dream'
       and created_at > coalesce((select max(started_at) from dream_journal where kind = 'reflect' and status = 'done' and scope = $2), '-infinity')
     order by importance desc, created_at desc limit $1`,
    [limit, scope],
  );
  return res.rows;
}

/**
 * The summed importance of experience (episodic and semantic memories) since the last
 * reflection, and the scope that holds the most of it: the one to reflect on. The window is the
 * server's (any scope's reflection closes it), so the scheduler's look stays a read of recent
 * memories; the chosen scope's reflection then draws on everything since its own last one.
 */
export async function experienceSinceReflection(db: Queryable): Promise<{ importance: number; scope: string | null }> {
  const res = await db.query<{ scope: string; sum: number }>(
    `select scope, sum(importance)::float8 as sum from memories
     where deleted_at is null and kind in ('episodic', 'semantic') and created_at > ${LAST_REFLECTION}
     group by scope order by sum desc, scope`,
  );
  return { importance: res.rows.reduce((a, r) => a + r.sum, 0), scope: res.rows[0]?.scope ?? null };
}

export interface DreamState {
  state: "sleeping" | "dreaming" | "waking" | "awake";
  /** What is running: dream, idle (thought) or reflect; null when none. */
  kind: JournalKind | null;
  since: Date | null;
  focus: string | null;
  dream_id: string | null;
  /** The scope the running reverie draws on; null when none runs. */
  scope: string | null;
  /** What the running reverie is about (its seeds' words); empty when none runs. */
  topics: string[];
  /** A consolidation under way (it runs beside the dream life, in the memory worker), or null. */
  consolidating: { journal_id: string; since: Date } | null;
}

/**
 * The dream life's states, from the tables (any web process can tell): dreaming while a journal
 * entry is open, waking when a chat has been queued since it began; otherwise awake while
 * someone is there (a client present, migrations/000016_presence_state.sql, or a request or a
 * turn within `awakeSeconds`), and sleeping when no one is.
 */
export async function dreamState(db: Queryable, awakeSeconds: number): Promise<DreamState> {
  const res = await db.query<{
    dream_id: string | null;
    kind: JournalKind | null;
    dream_started: Date | null;
    focus: string | null;
    scope: string | null;
    topics: string[] | null;
    consolidation_id: string | null;
    consolidation_since: Date | null;
    last_seen: Date | null;
    here: boolean;
    chat_waiting: boolean;
  }>(
    `select d.id as dream_id, d.kind, coalesce(d.resumed_at, d.started_at) as dream_started, d.focus, d.scope, d.topics,
       c.id as consolidation_id, c.started_at as consolidation_since,
       greatest(${LAST_TURN_ACTIVITY}, (select last_request_at from activity),
         (select max(last_seen_at) from clients where left_at is null)) as last_seen,
       psyche_someone_here() or coalesce(${LAST_TURN_ACTIVITY} > now() - make_interval(secs => $1), false) as here,
       exists (select 1 from turns t where t.status in ('queued', 'running') and d.id is not null and t.created_at >= coalesce(d.resumed_at, d.started_at)) as chat_waiting
     from (select 1) one left join lateral (select * from dream_journal where status = 'dreaming' and kind <> 'consolidate' order by started_at desc limit 1) d on true
       left join lateral (select id, started_at from dream_journal where status = 'dreaming' and kind = 'consolidate' order by started_at desc limit 1) c on true`,
    [awakeSeconds],
  );
  const r = res.rows[0]!;
  const consolidating = r.consolidation_id ? { journal_id: r.consolidation_id, since: r.consolidation_since! } : null;
  if (r.dream_id)
    return {
      state: r.chat_waiting ? "waking" : "dreaming",
      kind: r.kind,
      since: r.dream_started,
      focus: r.focus,
      dream_id: r.dream_id,
      scope: r.scope,
      topics: r.topics ?? [],
      consolidating,
    };
  return {
    state: r.here ? "awake" : "sleeping",
    kind: null,
    since: r.last_seen,
    focus: null,
    dream_id: null,
    scope: null,
    topics: [],
    consolidating,
  };
}

export async function getDream(db: Queryable, id: string): Promise<DreamRow | undefined> {
  const res = await db.query<DreamRow>("select * from dream_journal where id = $1", [id]);
  return res.rows[0];
}

/** Since when it has been quiet, and what last happened (the dream scheduler's look). */
export interface QuietMoment {
  /** Seconds since the last request (or the start); null: neither. */
  quiet: number | null;
  conversation_id: string | null;
  /** Seconds since the last dream ended; null: none yet. */
  since_dream: number | null;
  thought_since_request: boolean;
  /** Clients present (heartbeating, migrations/000015_clients.sql): no dream while any is. */
  present: number;
  /** Seconds of the model's time reveries took within the budget's window (migrations/000030_dream_resume.sql). */
  budget_used: number;
  /** A dream is paused, waiting to be continued. */
  paused_dream: boolean;
}

/**
 * Quiet counts from the last turn, the last request of any kind (db/sql/activity.ts, written at
 * most once a second) or the last client's heartbeat or leaving (db/sql/clients.ts).
 * `startedAt` counts as a request: a freshly started server waits before it dreams (a warm-up: the first request after a start must not find it asleep). */
export async function quietMoment(
  db: Queryable,
  startedAt: Date,
  presenceTtlSeconds: number,
  budgetWindowSeconds: number,
): Promise<QuietMoment> {
  // A dream paused by a chat has not ended: the cooldown counts from the last one that did. A
  // stretch still open on an entry that ended (its worker died) counts to the entry's end. Each
  // part reads from an end of an index (migrations/000032_growing_tables.sql): it runs every
  // look, in a transaction holding the embedded database's one backend.
  const res = await db.query<QuietMoment>(
    `with last as (
       select greatest(${LAST_TURN_ACTIVITY}, $1::timestamptz,
         (select last_request_at from activity), (select max(greatest(last_seen_at, left_at)) from clients)) as at
     )
     select extract(epoch from now() - (select at from last))::float8 as quiet,
       (select conversation_id from turns where conversation_id is not null order by created_at desc limit 1) as conversation_id,
       extract(epoch from now() - (select max(ended_at) from dream_journal where kind = 'dream' and status <> 'paused'))::float8 as since_dream,
       coalesce((select max(started_at) from dream_journal where kind = 'idle') > (select at from last), false) as thought_since_request,
       (select count(*)::int from clients where left_at is null and last_seen_at > now() - make_interval(secs => $2)) as present,
       (select coalesce(sum(greatest(0, extract(epoch from
            least(now(), coalesce(s.ended_at,
              (select case when j.status = 'dreaming' then now() else j.ended_at end from dream_journal j where j.id = s.journal_id), now()))
            - greatest(s.started_at, now() - make_interval(secs => $3))))), 0)::float8
          from dream_slices s
         where s.ended_at is null or s.ended_at > now() - make_interval(secs => $3)) as budget_used,
       exists (select 1 from dream_journal where status = 'paused' and kind = 'dream') as paused_dream`,
    [startedAt, presenceTtlSeconds, budgetWindowSeconds],
  );
  return res.rows[0]!;
}

/**
 * The scope a reverie draws on when its job names none: an idle thought's conversation's, else
 * the scope of the newest memory (where the last thing happened).
 */
export async function reverieScope(db: Queryable, conversationId: string | null): Promise<string> {
  const res = await db.query<{ scope: string }>(
    `select coalesce((select scope from conversations where id = $1),
                     (select scope from memories where deleted_at is null order by created_at desc limit 1), 'default') as scope`,
    [conversationId],
  );
  return res.rows[0]?.scope ?? DEFAULT_SCOPE;
}

/**
 * Fresh statistics for the dream journal's stretches: which of them lie within the dream
 * budget's window (quietMoment, at each look) is a range the planner can tell small only from
 * them, and the embedded database has no autovacuum to gather them (the memory worker's hourly
 * tick does, as for the full-text index). The journal's other questions read an index's end or
 * a partial index and need none (migrations/000032_growing_tables.sql).
 */
export async function refreshDreamStatistics(db: Queryable): Promise<void> {
  await db.query("analyze dream_slices");
}

/**
 * Deletes journal entries that ended more than `keepDays` days ago and did not become a memory
 * (migrations/000004_dreams.sql; a kept reverie is a memory whose source is its entry): the
 * journal otherwise grows by every idle thought for as long as the server runs. The latest
 * entry of each kind stays, whatever its age: the schedule reads when each last ran.
 */
export async function pruneJournal(db: Queryable, keepDays: number): Promise<number> {
  const res = await db.query(
    `delete from dream_journal j
      where j.status not in ('dreaming', 'paused')
        and coalesce(j.ended_at, j.started_at) < now() - make_interval(days => $1::int)
        and not exists (select 1 from memories m where m.source_kind = 'dream' and m.source_id = j.id::text)
        and j.id <> (select l.id from dream_journal l where l.kind = j.kind order by l.started_at desc limit 1)`,
    [keepDays],
  );
  return res.rowCount ?? 0;
}

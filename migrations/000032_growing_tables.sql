-- Indexes for the questions asked on a timer or at every turn of tables that grow with use
-- (docs/decisions.md, "Indexes for what grows"). Without them each read its whole table: at
-- 100,000 turns the dream scheduler's look (src/db/sql/dreams.ts, quietMoment, every 1.25 s
-- when idle by default, in a transaction holding the embedded database's one backend) took 250 ms,
-- and the heartbeat's search for stranded jobs (src/db/sql/pgboss-jobs.ts, strandedJobs) 130 ms
-- once a chat had run ten seconds; at 50,000 mood entries a turn's check that its mood was not
-- moved already (src/db/sql/mood.ts, moodFromSource) 10 ms.

-- The turn of a job (strandedJobs), and the first and last activity (quietMoment, dreamState,
-- endDream's wake latency): each read from an end of an index, not the table.
create index turns_job on turns (job_id) where job_id is not null;
create index turns_created on turns (created_at);
create index turns_finished on turns (finished_at) where finished_at is not null;

create index emotion_log_source on emotion_log (source_id, cause) where source_id is not null;

-- What is being dreamt or waits to be continued (every heartbeat asks), the last of each kind,
-- and the stretches within the dream budget's window (quietMoment).
create index dream_journal_live on dream_journal (status, kind) where status in ('dreaming', 'paused');
create index dream_journal_kind_started on dream_journal (kind, started_at);
create index dream_journal_kind_ended on dream_journal (kind, ended_at);
create index dream_slices_ended on dream_slices (ended_at);

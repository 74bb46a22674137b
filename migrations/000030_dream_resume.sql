-- Dreams that resume (src/dreams/dream.ts): a dream or a reflection that a chat woke (or whose
-- share of the model's time ran out, or whose worker stopped) is 'paused', its text so far kept,
-- and a later reverie of its kind continues it in the same entry. `resumes` counts how often.
alter table dream_journal drop constraint dream_journal_status_check;
alter table dream_journal add constraint dream_journal_status_check
  check (status in ('dreaming', 'paused', 'done', 'interrupted', 'failed'));
alter table dream_journal add column resumes integer not null default 0;
alter table dream_journal add column resumed_at timestamptz;
alter table dream_journal add column note text;
comment on column dream_journal.resumes is 'How often a paused entry was continued by a later reverie';
comment on column dream_journal.resumed_at is 'When its latest stretch began (null: never resumed)';
comment on column dream_journal.note is 'Why it ended as it did, where that is not plain (a resumed dream that could not continue)';

-- Each stretch of the model's time a reverie took: the reverie budget (src/dreams/scheduler.ts)
-- sums those within its window, and a resumed entry's time limit counts all of its own.
create table dream_slices (
  journal_id uuid not null references dream_journal (id) on delete cascade,
  job_id uuid,
  started_at timestamptz not null default clock_timestamp(),
  ended_at timestamptz,
  primary key (journal_id, started_at)
);
create index dream_slices_started on dream_slices (started_at desc);

-- The journal's events (migrations/000029_dream_topics.sql), with a resumed entry's return to
-- dreaming and a paused one's stop.
create or replace function events_dream_journal() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform psyche_event('dream.state', jsonb_build_object('state', 'dreaming', 'kind', new.kind, 'journal_id', new.id, 'focus', new.focus,
      'topics', to_jsonb(new.topics)), new.scope);
  elsif old.status <> 'dreaming' and new.status = 'dreaming' then
    perform psyche_event('dream.state', jsonb_build_object('state', 'dreaming', 'kind', new.kind, 'journal_id', new.id, 'focus', new.focus,
      'topics', to_jsonb(new.topics), 'resumes', new.resumes), new.scope);
  elsif old.status = 'dreaming' and new.status <> 'dreaming' then
    perform psyche_event('dream.state', jsonb_build_object(
      'state', case when new.was_interrupted or psyche_someone_here() then 'awake' else 'sleeping' end, 'kind', new.kind, 'journal_id', new.id,
      'status', new.status, 'was_interrupted', new.was_interrupted, 'wake_latency_ms', new.wake_latency_ms, 'tokens', new.tokens,
      'resumes', new.resumes,
      'seconds', round(extract(epoch from coalesce(new.ended_at, now()) - coalesce(new.resumed_at, new.started_at))::numeric, 3)), new.scope);
  elsif old.significance is null and new.significance is not null then
    perform psyche_event('reverie.finished', jsonb_build_object(
      'journal_id', new.id, 'kind', new.kind, 'status', new.status, 'significance', round(new.significance::numeric, 4),
      'became_memory', exists (select 1 from memories m where m.source_kind = 'dream' and m.source_id = new.id::text),
      'topics', to_jsonb(new.topics), 'resumes', new.resumes), new.scope);
  end if;
  return null;
end $$;

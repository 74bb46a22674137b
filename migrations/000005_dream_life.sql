-- Dreams, part two (ARCHITECTURE.md §3): reflections, idle thoughts and consolidation runs in
-- the journal; the dream settings and do-not-disturb in the database, so every process reads
-- the same; the mood's scheduled decay in its log; memories folded into others by consolidation.
alter table dream_journal drop constraint dream_journal_kind_check;
alter table dream_journal add constraint dream_journal_kind_check check (kind in ('dream', 'reflect', 'idle', 'consolidate'));
create index dream_journal_job on dream_journal (job_id);
-- The inference worker that ran it, so an entry left open by a worker that died can be closed.
alter table dream_journal add column worker_id uuid;

alter table emotion_log drop constraint emotion_log_cause_check;
alter table emotion_log add constraint emotion_log_cause_check check (cause in ('turn', 'dream', 'api', 'decay'));

-- Consolidation soft-deletes a near-duplicate and points it at the memory that absorbed it.
alter table memories add column merged_into uuid;
-- Recent insights and dreams, offered to every chat turn as background (memory/recall.ts).
create index memories_insights on memories (created_at desc) where deleted_at is null and kind in ('insight', 'dream');

-- One row: the settings changed through PATCH /dream/config (the rest come from the flags),
-- and do-not-disturb.
create table dream_settings (
  id boolean primary key default true check (id),
  overrides jsonb not null default '{}',
  dnd_until timestamptz,
  dnd_reason text,
  updated_at timestamptz not null default now()
);
insert into dream_settings default values;

create view reflections as
  select j.id, j.kind, j.status, j.started_at, j.focus, cardinality(j.seed_memory_ids) as sources, round(j.significance::numeric, 3) as significance,
         left(j.content, 200) as excerpt
  from dream_journal j where j.kind in ('reflect', 'idle') order by j.started_at desc;

-- The settings changed through the API, one row each (the rest are the flags' defaults).
create view dream_settings_changed as
  select o.key as setting, o.value, s.updated_at from dream_settings s cross join lateral jsonb_each(s.overrides) o order by o.key;

-- What each journal entry is about, in a few words (src/memory/topics.ts): drawn from the
-- memories a reverie starts from when it starts, from its text and those memories once it has
-- ended; a consolidation's from the memories it folded. Queryable: select topics from dream_journal.
alter table dream_journal add column topics text[] not null default '{}';
comment on column dream_journal.topics is 'A few words the entry is about: its seeds'' while it runs, its text''s and its seeds'' once ended';

-- The journal's events (migrations/000024_event_scopes.sql) say what a reverie is about.
create or replace function events_dream_journal() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform psyche_event('dream.state', jsonb_build_object('state', 'dreaming', 'kind', new.kind, 'journal_id', new.id, 'focus', new.focus,
      'topics', to_jsonb(new.topics)), new.scope);
  elsif old.status = 'dreaming' and new.status <> 'dreaming' then
    perform psyche_event('dream.state', jsonb_build_object(
      'state', case when new.was_interrupted or psyche_someone_here() then 'awake' else 'sleeping' end, 'kind', new.kind, 'journal_id', new.id,
      'status', new.status, 'was_interrupted', new.was_interrupted, 'wake_latency_ms', new.wake_latency_ms, 'tokens', new.tokens,
      'seconds', round(extract(epoch from coalesce(new.ended_at, now()) - new.started_at)::numeric, 3)), new.scope);
  elsif old.significance is null and new.significance is not null then
    perform psyche_event('reverie.finished', jsonb_build_object(
      'journal_id', new.id, 'kind', new.kind, 'status', new.status, 'significance', round(new.significance::numeric, 4),
      'became_memory', exists (select 1 from memories m where m.source_kind = 'dream' and m.source_id = new.id::text),
      'topics', to_jsonb(new.topics)), new.scope);
  end if;
  return null;
end $$;

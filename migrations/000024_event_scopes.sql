-- Events say whose they are, so that GET /v1/events can keep scopes apart for an API key bound
-- to some (src/http/routes/events.ts): a memory's events are its scope's, a reverie's are the
-- scope it draws on (migrations/000023_dream_scope.sql). Null: the server's own (the mood,
-- presence), which every key reads.
alter table events add column scope text;
comment on column events.scope is 'The scope the event belongs to (a memory''s, a reverie''s); null: the server''s own';

create function psyche_event(event_type text, event_data jsonb, event_scope text) returns void language plpgsql as $$
begin
  insert into events (type, data, scope) values (event_type, jsonb_strip_nulls(event_data), event_scope);
end $$;

create or replace function events_dream_journal() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform psyche_event('dream.state', jsonb_build_object('state', 'dreaming', 'kind', new.kind, 'journal_id', new.id, 'focus', new.focus), new.scope);
  elsif old.status = 'dreaming' and new.status <> 'dreaming' then
    perform psyche_event('dream.state', jsonb_build_object(
      'state', case when new.was_interrupted or psyche_someone_here() then 'awake' else 'sleeping' end, 'kind', new.kind, 'journal_id', new.id,
      'status', new.status, 'was_interrupted', new.was_interrupted, 'wake_latency_ms', new.wake_latency_ms, 'tokens', new.tokens,
      'seconds', round(extract(epoch from coalesce(new.ended_at, now()) - new.started_at)::numeric, 3)), new.scope);
  elsif old.significance is null and new.significance is not null then
    perform psyche_event('reverie.finished', jsonb_build_object(
      'journal_id', new.id, 'kind', new.kind, 'status', new.status, 'significance', round(new.significance::numeric, 4),
      'became_memory', exists (select 1 from memories m where m.source_kind = 'dream' and m.source_id = new.id::text)), new.scope);
  end if;
  return null;
end $$;

create or replace function events_wake_request() returns trigger language plpgsql as $$
declare
  running record;
begin
  if new.wake_requested_at is distinct from old.wake_requested_at and new.wake_requested_at is not null then
    select id, kind, scope into running from dream_journal where status = 'dreaming' order by started_at desc limit 1;
    if found then
      perform psyche_event('dream.state', jsonb_build_object('state', 'waking', 'kind', running.kind, 'journal_id', running.id), running.scope);
    end if;
  end if;
  return null;
end $$;

create or replace function events_turn_wakes() returns trigger language plpgsql as $$
declare
  running record;
begin
  if exists (select 1 from dream_settings where dnd_until > now()) then
    return null;
  end if;
  select id, kind, scope into running from dream_journal where status = 'dreaming' order by started_at desc limit 1;
  if found then
    perform psyche_event('dream.state', jsonb_build_object('state', 'waking', 'kind', running.kind, 'journal_id', running.id, 'turn_id', new.id), running.scope);
  end if;
  return null;
end $$;

create or replace function events_memories() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform psyche_event('memory.stored', jsonb_build_object(
      'id', new.id, 'kind', new.kind, 'importance', round(new.importance::numeric, 4), 'source_kind', new.source_kind,
      'source_id', new.source_id, 'excerpt', left(new.content, 120)), new.scope);
  elsif old.merged_into is null and new.merged_into is not null then
    perform psyche_event('memory.folded', jsonb_build_object('id', new.id, 'into', new.merged_into), new.scope);
  end if;
  return null;
end $$;

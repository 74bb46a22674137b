-- What happens inside, as one ordered log (GET /v1/events, docs/operations.md). Triggers write it
-- in the same transaction as the change itself, so no process can change the dream journal,
-- the memories, the mood or presence without its event, and no event is lost between
-- processes: a reader resumes by id.
create table events (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  type text not null,
  data jsonb not null default '{}'
);
create index events_at on events (at);
comment on table events is 'Dream states, reveries, memories, mood and presence, in order; written by triggers (migrations/000013_events.sql)';

create function psyche_event(event_type text, event_data jsonb) returns void language plpgsql as $$
begin
  insert into events (type, data) values (event_type, jsonb_strip_nulls(event_data));
end $$;

-- A reverie begins (dreaming), ends (awake when a chat woke it, else sleeping), and is scored.
create function events_dream_journal() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform psyche_event('dream.state', jsonb_build_object('state', 'dreaming', 'kind', new.kind, 'journal_id', new.id, 'focus', new.focus));
  elsif old.status = 'dreaming' and new.status <> 'dreaming' then
    perform psyche_event('dream.state', jsonb_build_object(
      'state', case when new.was_interrupted then 'awake' else 'sleeping' end, 'kind', new.kind, 'journal_id', new.id,
      'status', new.status, 'was_interrupted', new.was_interrupted, 'wake_latency_ms', new.wake_latency_ms, 'tokens', new.tokens,
      'seconds', round(extract(epoch from coalesce(new.ended_at, now()) - new.started_at)::numeric, 3)));
  elsif old.significance is null and new.significance is not null then
    perform psyche_event('reverie.finished', jsonb_build_object(
      'journal_id', new.id, 'kind', new.kind, 'status', new.status, 'significance', round(new.significance::numeric, 4),
      'became_memory', exists (select 1 from memories m where m.source_kind = 'dream' and m.source_id = new.id::text)));
  end if;
  return null;
end $$;
create trigger events_dream_journal after insert or update on dream_journal for each row execute function events_dream_journal();

-- Someone asked a running reverie to wake (POST /dream/wake, MCP's wake).
create function events_wake_request() returns trigger language plpgsql as $$
declare
  running record;
begin
  if new.wake_requested_at is distinct from old.wake_requested_at and new.wake_requested_at is not null then
    select id, kind into running from dream_journal where status = 'dreaming' order by started_at desc limit 1;
    if found then
      perform psyche_event('dream.state', jsonb_build_object('state', 'waking', 'kind', running.kind, 'journal_id', running.id));
    end if;
  end if;
  return null;
end $$;
create trigger events_wake_request after update on dream_settings for each row execute function events_wake_request();

-- A chat (a new turn) wakes a running reverie, unless do-not-disturb holds it until the end.
create function events_turn_wakes() returns trigger language plpgsql as $$
declare
  running record;
begin
  if exists (select 1 from dream_settings where dnd_until > now()) then
    return null;
  end if;
  select id, kind into running from dream_journal where status = 'dreaming' order by started_at desc limit 1;
  if found then
    perform psyche_event('dream.state', jsonb_build_object('state', 'waking', 'kind', running.kind, 'journal_id', running.id, 'turn_id', new.id));
  end if;
  return null;
end $$;
create trigger events_turn_wakes after insert on turns for each row execute function events_turn_wakes();

create function events_memories() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform psyche_event('memory.stored', jsonb_build_object(
      'id', new.id, 'kind', new.kind, 'importance', round(new.importance::numeric, 4), 'source_kind', new.source_kind,
      'source_id', new.source_id, 'excerpt', left(new.content, 120)));
  elsif old.merged_into is null and new.merged_into is not null then
    perform psyche_event('memory.folded', jsonb_build_object('id', new.id, 'into', new.merged_into));
  end if;
  return null;
end $$;
create trigger events_memories after insert or update of merged_into on memories for each row execute function events_memories();

create function events_mood() returns trigger language plpgsql as $$
begin
  perform psyche_event('mood.changed', jsonb_build_object(
    'valence', round(new.valence::numeric, 4), 'arousal', round(new.arousal::numeric, 4), 'cause', new.cause, 'source_id', new.source_id));
  return null;
end $$;
create trigger events_mood after insert on emotion_log for each row execute function events_mood();

-- A client came: a request after a minute of quiet (dreams/status.ts counts a minute after the
-- last request as awake). Leaving is silence, which no row records: the dream scheduler writes
-- `client.left` when it finds a minute of it (db/sql/events.ts, noteDeparture).
create function events_presence() returns trigger language plpgsql as $$
begin
  if old.last_request_at is null or new.last_request_at - old.last_request_at > interval '60 seconds' then
    perform psyche_event('client.came', jsonb_build_object('quiet_seconds',
      case when old.last_request_at is null then null else round(extract(epoch from new.last_request_at - old.last_request_at)::numeric, 1) end));
  end if;
  return null;
end $$;
create trigger events_presence after update on activity for each row execute function events_presence();

-- The dream state is about presence: awake while a client is present (a heartbeating client,
-- or any request within the last minute), dreaming while a reverie runs, sleeping otherwise.
-- Triggers cannot read the server's --presence-ttl-seconds, so the server records it here at
-- start (src/db/sql/activity.ts), and the state a reverie ends in is read from the clients.
alter table activity add column presence_ttl_seconds integer not null default 45 check (presence_ttl_seconds > 0);
comment on column activity.presence_ttl_seconds is 'How long a silent client counts as present (the last server started sets it)';

create function psyche_someone_here() returns boolean language sql stable as $$
  select exists (
    select 1 from clients c, activity a
    where c.left_at is null and c.last_seen_at > now() - make_interval(secs => a.presence_ttl_seconds)
  ) or exists (select 1 from activity where last_request_at > now() - interval '60 seconds')
$$;

create or replace function events_dream_journal() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform psyche_event('dream.state', jsonb_build_object('state', 'dreaming', 'kind', new.kind, 'journal_id', new.id, 'focus', new.focus));
  elsif old.status = 'dreaming' and new.status <> 'dreaming' then
    perform psyche_event('dream.state', jsonb_build_object(
      'state', case when new.was_interrupted or psyche_someone_here() then 'awake' else 'sleeping' end, 'kind', new.kind, 'journal_id', new.id,
      'status', new.status, 'was_interrupted', new.was_interrupted, 'wake_latency_ms', new.wake_latency_ms, 'tokens', new.tokens,
      'seconds', round(extract(epoch from coalesce(new.ended_at, now()) - new.started_at)::numeric, 3)));
  elsif old.significance is null and new.significance is not null then
    perform psyche_event('reverie.finished', jsonb_build_object(
      'journal_id', new.id, 'kind', new.kind, 'status', new.status, 'significance', round(new.significance::numeric, 4),
      'became_memory', exists (select 1 from memories m where m.source_kind = 'dream' and m.source_id = new.id::text)));
  end if;
  return null;
end $$;

comment on column dream_journal.wake_latency_ms is 'From what woke it (a chat request, a wake request, a client arriving: the earliest since it began) to its generation stopping';

-- Clients that say they are there (Hermes, or any client that heartbeats POST /v1/presence):
-- while one is present Psyche does not dream, and the dream delay counts from the last one's
-- leaving (src/dreams/scheduler.ts). A client that stops heartbeating without saying goodbye
-- is gone after the presence TTL (--presence-ttl-seconds), counted from its last heartbeat.
create table clients (
  id uuid primary key,
  name text not null check (length(name) between 1 and 64),
  connected_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  left_at timestamptz
);
create index clients_here on clients (last_seen_at desc) where left_at is null;
comment on table clients is 'Clients present (heartbeating), and when each came and left';

-- The dream journal (ARCHITECTURE.md §6): every dream, finished or interrupted.
create table dream_journal (
  id uuid primary key,
  kind text not null default 'dream' check (kind in ('dream', 'reflect', 'idle')),
  status text not null default 'dreaming' check (status in ('dreaming', 'done', 'interrupted', 'failed')),
  job_id uuid,
  focus text,
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  seed_memory_ids uuid[] not null default '{}',
  content text not null default '',
  significance real,
  valence real,
  arousal real,
  was_interrupted boolean not null default false,
  wake_latency_ms real,          -- chat arrival to the dream's generation stopped
  tokens integer not null default 0,
  model text not null,
  error text
);
create index dream_journal_started on dream_journal (started_at desc);

-- Views for people reading the journal with psql.
create view dream_recent as
  select id, kind, status, started_at, ended_at - started_at as took, tokens, round(significance::numeric, 3) as significance,
         was_interrupted, wake_latency_ms, focus, left(content, 200) as excerpt
  from dream_journal order by started_at desc limit 50;

create view dream_interrupted as
  select id, started_at, ended_at - started_at as dreamt_for, tokens, wake_latency_ms, left(content, 200) as kept
  from dream_journal where was_interrupted order by started_at desc;

create view dreams_per_day as
  select started_at::date as day, count(*) as dreams, count(*) filter (where was_interrupted) as interrupted,
         round(avg(significance)::numeric, 3) as avg_significance, sum(tokens) as tokens
  from dream_journal group by 1 order by 1 desc;

create view insights_with_sources as
  select m.id, m.kind, m.created_at, left(m.content, 200) as insight, s.id as source_id, left(s.content, 120) as source
  from memories m cross join lateral unnest(m.citations) as c(id) join memories s on s.id = c.id
  where m.kind in ('insight', 'dream') and m.deleted_at is null;

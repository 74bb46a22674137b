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

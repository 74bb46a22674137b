-- Long-term memory (ARCHITECTURE.md §4), the mood's history (§5) and re-embedding runs.

create table memories (
  id uuid primary key default gen_random_uuid(),
  kind text not null check (kind in ('episodic', 'semantic', 'dream', 'insight')),
  content text not null check (length(content) > 0),
  summary text,
  tags text[] not null default '{}',
  importance real not null check (importance between 0 and 1),
  valence real not null default 0 check (valence between -1 and 1),
  arousal real not null default 0 check (arousal between -1 and 1),
  -- No fixed size: each embedder has its own, and its own partial HNSW index over
  -- (embedding::vector(n)) where embedder = '<id>' (pgvector's way to index mixed sizes).
  embedding vector not null,
  embedder text not null,
  tsv tsvector generated always as (to_tsvector('english', coalesce(summary, '') || ' ' || content)) stored,
  source_kind text not null default 'api' check (source_kind in ('api', 'conversation', 'turn', 'dream', 'tool')),
  source_id text,
  citations uuid[] not null default '{}',
  created_at timestamptz not null default now(),
  last_accessed_at timestamptz not null default now(),
  access_count integer not null default 0,
  reinforcements integer not null default 0,   -- near-duplicates folded into this memory
  deleted_at timestamptz                       -- soft-deleted; purged later
)
-- Room on each page for the access-time updates every retrieval makes: they stay HOT (no new
-- entries in the HNSW and GIN indexes, which cost ~1 ms a row).
with (fillfactor = 70);

create index memories_tsv on memories using gin (tsv);
-- The built-in embedder's index; other embedders get theirs when first used (db/sql/memories.ts).
create index memories_hnsw_psyche_lexical_256 on memories
  using hnsw ((embedding::vector(256)) vector_cosine_ops)
  where embedder = 'psyche-lexical-256' and deleted_at is null;
-- Full-text candidates are the newest matches (db/sql/memories.ts explains why).
create index memories_created on memories (created_at desc) where deleted_at is null;
create index memories_deleted on memories (deleted_at) where deleted_at is not null;
create index memories_embedder on memories (embedder) where deleted_at is null;
create index memories_source on memories (source_kind, source_id);

-- Every change of mood, so its history can be plotted and queried.
create table emotion_log (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  valence real not null check (valence between -1 and 1),
  arousal real not null check (arousal between -1 and 1),
  cause text not null check (cause in ('turn', 'dream', 'api')),
  source_id text,
  -- The affect of what happened, before it was blended into the mood.
  stimulus_valence real,
  stimulus_arousal real
);
create index emotion_log_at on emotion_log (at desc, id desc);

-- Re-embedding every memory with a new embedder: one row per run, its progress visible.
create table embedding_runs (
  id uuid primary key,
  embedder text not null,
  status text not null default 'queued' check (status in ('queued', 'running', 'done', 'failed', 'superseded')),
  total integer,
  done integer not null default 0,
  error text,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz
);
create index embedding_runs_created on embedding_runs (created_at desc);

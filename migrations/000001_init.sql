-- Conversations, their messages, chat turns and the events a turn streams.
create extension if not exists vector;

create table conversations (
  id text primary key,                 -- the client's id, or a generated one
  created_at timestamptz not null default now(),
  last_active_at timestamptz not null default now()
);

create table turns (
  id uuid primary key default gen_random_uuid(),
  conversation_id text not null references conversations(id) on delete cascade,
  status text not null default 'queued'
    check (status in ('queued', 'running', 'done', 'failed', 'cancelled')),
  model text not null,
  temperature real,
  top_p real,
  max_tokens integer not null,
  seed bigint,
  stop text[] not null default '{}',
  stream boolean not null default false,
  prompt_end_position integer,         -- the prompt is the active transcript up to this position
  job_id uuid,
  worker_id uuid,
  attempts integer not null default 0,
  content text,                        -- the whole reply, once finished
  finish_reason text,
  prompt_tokens integer,
  completion_tokens integer,
  error text,
  cancel_requested_at timestamptz,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz
);
create index turns_conversation on turns (conversation_id, created_at);
create index turns_unfinished on turns (status) where status in ('queued', 'running');

create table messages (
  id bigint generated always as identity primary key,
  conversation_id text not null references conversations(id) on delete cascade,
  position integer not null,
  role text not null check (role in ('system', 'user', 'assistant', 'tool')),
  content text not null default '',
  name text,
  tool_calls jsonb,
  tool_call_id text,
  turn_id uuid references turns(id) on delete set null,
  superseded_at timestamptz,           -- set when a client rewrote the history from here
  created_at timestamptz not null default now(),
  unique (conversation_id, position)
);

-- What a turn streams, in order. 'delta' rows carry generated text; 'done' and 'error' end it.
create table turn_events (
  turn_id uuid not null references turns(id) on delete cascade,
  seq integer not null,
  kind text not null check (kind in ('delta', 'done', 'error')),
  content text not null default '',
  tokens integer not null default 0,   -- tokens generated in this delta
  created_at timestamptz not null default now(),
  primary key (turn_id, seq)
);

-- Inference processes and their heartbeats: a turn held by a silent worker is retried.
create table inference_workers (
  id uuid primary key,
  host text not null,
  pid integer not null,
  model text not null,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now(),
  stopped_at timestamptz
);

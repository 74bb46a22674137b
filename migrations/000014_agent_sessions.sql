-- Coding-agent sessions and their working hypotheses (GHAP: goal, hypothesis, action,
-- prediction, then an outcome), kept in the server so that any process, hook or MCP call sees
-- them, and a session that crashed or was forgotten is noticed by the next one
-- (src/agents/sessions.ts).

create table agent_sessions (
  id uuid primary key default gen_random_uuid(),
  agent text not null check (length(agent) between 1 and 64),
  -- The project the agent works in: its working directory.
  project text not null check (length(project) between 1 and 4096),
  -- The agent's own id for the session (Claude Code's session_id), so its hooks find it again.
  external_id text check (length(external_id) <= 256),
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  end_reason text,
  -- Tool uses in the session, and since the last GHAP check-in.
  tool_count integer not null default 0,
  tools_since_check_in integer not null default 0
);
create index agent_sessions_open on agent_sessions (project, started_at desc) where ended_at is null;
create unique index agent_sessions_external on agent_sessions (agent, external_id) where external_id is not null;

create table ghap (
  id uuid primary key default gen_random_uuid(),
  session_id uuid not null references agent_sessions (id),
  goal text not null check (length(goal) between 1 and 4000),
  hypothesis text not null check (length(hypothesis) between 1 and 4000),
  action text not null check (length(action) between 1 and 4000),
  prediction text not null check (length(prediction) between 1 and 4000),
  status text not null default 'active' check (status in ('active', 'confirmed', 'falsified', 'abandoned')),
  outcome_note text,
  -- The semantic memory a resolved GHAP became.
  memory_id uuid references memories (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  resolved_at timestamptz,
  check ((status = 'active') = (resolved_at is null))
);
-- One working hypothesis at a time per session.
create unique index ghap_one_active on ghap (session_id) where status = 'active';
create index ghap_by_status on ghap (status, updated_at desc);

-- A resolved GHAP is remembered as experience.
alter table memories drop constraint memories_source_kind_check;
alter table memories add constraint memories_source_kind_check check (source_kind in ('api', 'conversation', 'turn', 'dream', 'tool', 'ghap'));

comment on table agent_sessions is 'Coding-agent sessions (Claude Code and others reaching Psyche through hooks and MCP)';
comment on table ghap is 'Working hypotheses of agent sessions: goal, hypothesis, action, prediction, then confirmed / falsified / abandoned';

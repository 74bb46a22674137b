-- Memories people can correct: every version of a memory is kept, with when and by what it
-- changed, and a memory can supersede others (src/memory/history.ts). A superseded memory leaves
-- default search but stays readable, with its history.

alter table memories
  add column updated_at timestamptz,
  add column version integer not null default 1,
  add column supersedes uuid[] not null default '{}',
  add column superseded_by uuid,
  add column superseded_at timestamptz;
update memories set updated_at = created_at;
alter table memories alter column updated_at set not null, alter column updated_at set default now();
comment on column memories.supersedes is 'Memories this one replaced (they carry superseded_by = this id)';
comment on column memories.superseded_at is 'When a newer memory replaced this one; set: out of default search and recall';

create table memory_versions (
  memory_id uuid not null references memories(id) on delete cascade,
  version integer not null,
  at timestamptz not null default now(),
  -- Who made the change: the API, an MCP tool, consolidation, supersession, an import, or,
  -- for a first version, where the memory came from (its source kind).
  by text not null check (by in ('api', 'mcp', 'consolidation', 'supersession', 'import', 'conversation', 'turn', 'dream', 'tool', 'ghap')),
  change text not null check (change in ('created', 'corrected', 'reinforced', 'folded', 'folded_into', 'superseded', 'imported')),
  content text not null,
  summary text,
  tags text[] not null,
  importance real not null,
  -- The other memories of the change: what was folded in or replaced, or what replaced this one.
  related uuid[] not null default '{}',
  primary key (memory_id, version)
);

-- Every memory stored before history existed starts with its first version as it is now.
insert into memory_versions (memory_id, version, at, by, change, content, summary, tags, importance)
select id, 1, created_at, case when source_kind in ('api', 'conversation', 'turn', 'dream', 'tool', 'ghap') then source_kind else 'api' end,
  'created', content, summary, tags, importance
from memories;

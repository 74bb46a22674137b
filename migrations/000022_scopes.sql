-- Scopes keep memories apart (docs/memory-and-mood.md): every memory and every conversation
-- belongs to one. A request names its scope (X-Psyche-Scope, ?scope=, an MCP tool's `scope`);
-- without one it is `default`, which every scope also reads. A turn recalls, and its memory is
-- stored, in its conversation's scope.
alter table memories add column scope text not null default 'default';
alter table conversations add column scope text not null default 'default';
create index memories_scope on memories (scope) where deleted_at is null;
comment on column memories.scope is 'The scope it belongs to; a request in scope S reads S and default';
comment on column conversations.scope is 'The scope its turns recall from and store their memories in';

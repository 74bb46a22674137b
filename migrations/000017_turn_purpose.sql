-- Why a turn was asked for: a chat, or a client's unattended exploration (Hermes exploring the
-- workspace while the user is away, X-Psyche-Purpose: exploration). What an exploration adds to
-- memory is what it learned, not its synthetic prompt (src/memory/turn-memory.ts).
alter table turns add column purpose text not null default 'chat' check (purpose in ('chat', 'exploration'));
comment on column turns.purpose is 'chat, or exploration (a client exploring on its own while the user is away)';

-- A reverie draws on one scope at a time (src/dreams/dream.ts): the memories it turns over are
-- that scope's, and what it keeps is stored there; its journal entry says which.
alter table dream_journal add column scope text not null default 'default';
comment on column dream_journal.scope is 'The scope whose memories the reverie drew on and kept its result in';

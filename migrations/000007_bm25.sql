-- Full-text ranking by BM25 over every memory (src/memory/text-index.ts, db/sql/memory-terms.ts).
-- Postgres has no BM25, so the statistics it needs are kept here, beside the memories:
--   memory_terms: one row per (term, memory) with the term's weighted frequency in the memory.
--     A memory of a conversation is indexed with its neighbours' words at a lower weight, so a
--     short turn ("let's go on with the plan") is found by what its conversation was about.
--     The term '' is every memory's length (the sum of its weights), so it also counts them.
--   memory_term_stats: per term, in how many memories it occurs (df) and its summed weight;
--     for '' these are the number of memories and their total length.
-- Only live memories have terms: a soft delete removes them (trigger below).
alter table memories add column conversation_id text;
create index memories_conversation on memories (conversation_id, created_at desc) where conversation_id is not null and deleted_at is null;

create table memory_terms (
  term text not null,
  memory_id uuid not null references memories (id) on delete cascade,
  tf real not null check (tf > 0 or term = ''),
  -- The memory's length (its '' row's tf), kept on every row so ranking reads one row a match.
  dl real not null,
  primary key (term, memory_id)
);
create index memory_terms_memory on memory_terms (memory_id);
-- A term's matches, densest first: a very common term is ranked from its best matches only.
-- Covering: ranking reads the index alone, never the table.
create index memory_terms_density on memory_terms (term, (tf / greatest(dl, 1)) desc) include (memory_id, tf, dl);

create table memory_term_stats (
  term text primary key,
  df integer not null,
  total_tf double precision not null
);
insert into memory_term_stats (term, df, total_tf) values ('', 0, 0);

-- The statistics follow the terms, whoever writes them: statement-level triggers over the rows
-- each statement added or removed (a changed weight is written as a delete and an insert).
create function memory_terms_added() returns trigger language plpgsql as $$
begin
  insert into memory_term_stats (term, df, total_tf)
    select term, count(*), sum(tf) from added group by term
  on conflict (term) do update set df = memory_term_stats.df + excluded.df, total_tf = memory_term_stats.total_tf + excluded.total_tf;
  return null;
end $$;
create trigger memory_terms_added after insert on memory_terms
  referencing new table as added for each statement execute function memory_terms_added();

create function memory_terms_removed() returns trigger language plpgsql as $$
begin
  update memory_term_stats s set df = s.df - r.n, total_tf = s.total_tf - r.tf
    from (select term, count(*) as n, sum(tf) as tf from removed group by term) r where s.term = r.term;
  return null;
end $$;
create trigger memory_terms_removed after delete on memory_terms
  referencing old table as removed for each statement execute function memory_terms_removed();

create function memory_unindexed_on_delete() returns trigger language plpgsql as $$
begin
  delete from memory_terms where memory_id = new.id;
  return null;
end $$;
create trigger memory_unindexed_on_delete after update of deleted_at on memories
  for each row when (old.deleted_at is null and new.deleted_at is not null) execute function memory_unindexed_on_delete();

comment on table memory_terms is 'BM25 postings: each live memory''s terms (its own, and its conversation neighbours'' at a lower weight); term '''' holds its length';
comment on table memory_term_stats is 'BM25 statistics per term: df (memories containing it) and total_tf; for term '''' the number of memories and their total length';
comment on column memories.conversation_id is 'The conversation a memory came from, if any: its neighbours there lend it context in full-text search';

-- A statement that writes in several parts undoes itself, by failing, when one part that the
-- rest depends on did not happen: a turn whose job pg-boss did not insert, or a turn's end
-- written by a worker that no longer holds the turn (src/db/sql/turns.ts). A data-modifying
-- part of a statement runs whatever the others do, so failing the statement is the only undo.
-- This says which part, under its own error code (src/db/errors.ts, requirementFailed).
create or replace function psyche_require(ok boolean, what text) returns boolean
language plpgsql as $$
begin
  if ok is not true then
    raise exception 'psyche: %', what using errcode = 'PS001';
  end if;
  return true;
end
$$;

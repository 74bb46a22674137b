-- The Responses API (http/routes/responses.ts): a response is a turn. `instructions` is the
-- turn's own system message, placed after the persona and not carried to the next turn; the
-- `responses` row keeps what the Responses API needs beside the turn: the chain, the input items
-- as sent (for GET /v1/responses/{id}/input_items), whether the client asked to store it, and
-- its deletion.
alter table turns add column instructions text;
comment on column turns.instructions is 'A system message for this turn only (the Responses API''s instructions)';

create table responses (
  turn_id uuid primary key references turns(id) on delete cascade,
  previous_turn_id uuid references turns(id) on delete set null,
  store boolean not null default true,
  metadata jsonb,
  input jsonb not null,                -- the input items, each with its id, in order
  deleted_at timestamptz
);
comment on table responses is 'POST /v1/responses requests: the response id is resp_ and the turn id''s 32 hex digits';
create index responses_previous on responses (previous_turn_id) where previous_turn_id is not null;

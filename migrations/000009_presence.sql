-- Presence: when the last request from a client came (a chat, an MCP call, the memory API, a
-- hook), whichever process took it. The dream scheduler counts quiet from it, as from a turn.
create table activity (
  id boolean primary key default true check (id),
  last_request_at timestamptz
);
insert into activity default values;
comment on table activity is 'When a client was last there: any authenticated request but reads of the dream life (GET /dream/*)';

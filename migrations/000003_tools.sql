-- Tool calling: the tools a turn offered, the choice it was given, and the calls it made.
alter table turns
  add column tools jsonb,          -- [{name, description, parameters}] as the client sent them
  add column tool_choice jsonb,    -- "auto" | "none" | "required" | {"name": ...}
  add column tool_calls jsonb,     -- [{id, name, arguments, problems}] when finish_reason = 'tool_calls'
  add column parallel_tool_calls boolean;  -- false: at most one call per reply

-- Psyche's own memory tools that ran during the turn: [{name, arguments, result}].
alter table turns add column server_tool_calls jsonb;

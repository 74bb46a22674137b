-- Structured output: the form a turn's reply must take (OpenAI's response_format, flattened:
-- {"type": "json_object"} or {"type": "json_schema", "name", "schema", "strict"}); null is free text.
alter table turns add column response_format jsonb;
comment on column turns.response_format is 'The form the reply must take (tools/response-format.ts); null = free text';

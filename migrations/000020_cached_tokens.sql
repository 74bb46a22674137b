-- Of a turn's prompt tokens, how many its slot already held (read once, reused): OpenAI's
-- usage.prompt_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens. Null for
-- turns from before slots, and where the engine does not know.
alter table turns add column cached_tokens integer;
comment on column turns.cached_tokens is 'Prompt tokens the model had already read in its slot (prefix reuse); null: unknown';

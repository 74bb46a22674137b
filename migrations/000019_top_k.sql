-- Anthropic's top_k: sample from the k likeliest tokens only; null when not given (every token).
alter table turns add column top_k integer;
comment on column turns.top_k is 'Sample from this many likeliest tokens (Anthropic''s top_k); null or 0: no limit';
